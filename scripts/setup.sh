#!/usr/bin/env bash
# `make setup`: from a fresh Debian machine to a working environment, with no human step.
#
#   1. Debian packages the project needs (only those missing; apt-get as root, else sudo -n),
#      SPIN and gcc for the model checker, and the libraries Qt loads for the dashboard (also off-screen).
#   2. ROS 2: a sourced distribution (ROS_DISTRO set, rclpy importable) is used as it is;
#      otherwise ROS 2 Kilted core wheels from PyPI go into the virtual environment.
#   3. .venv with the pinned Python dependencies and the project installed editable.
#   4. cosim_validation_interfaces built with cmake (C and Python type support) and installed into .ros/install;
#      4a. meanwhile the numba kernels compiled once into .cache/numba (scripts/warm_caches.py, the main job small);
#      4b. the public crtk_msgs (third_party/crtk_msgs) too, unless a ROS 2 install already provides it;
#      4c. the same for the FollowJointTrajectory subset of the public control_msgs (third_party/control_msgs);
#      4d. and for the ListControllers subset of ros2_control's controller_manager_msgs (third_party/controller_manager_msgs).
#      4e. the same for the move_group planning services of the public moveit_msgs and the messages they carry
#          (third_party/{shape_msgs,octomap_msgs,object_recognition_msgs,moveit_msgs}).
#   5. the built-in anatomy exported as STL into meshes/anatomy.
#   6. cosim_validation registered in the ament index of .ros/install (share/, lib/<node> executables).
#
# Every step keeps a stamp (a hash of its inputs) so a second run with nothing changed
# finishes in seconds. Nothing is written outside the repository except by apt-get.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
VENV="$ROOT/.venv"
ROSDIR="$ROOT/.ros"
PREFIX="$ROSDIR/install"
PIP_QUIET=${COSIM_PIP_QUIET:--q}

# each line carries the seconds since set-up started, so a slow step shows where the time goes
log() { printf '[setup %4ds] %s\n' "$SECONDS" "$*"; }
die() { printf '[setup] error: %s\n' "$*" >&2; exit 1; }
hash_of() { cat "$@" | sha256sum | cut -c1-16; }

# ---------------------------------------------------------------- 1. Debian packages
find_python() {
  local candidate
  for candidate in "${COSIM_PYTHON:-}" python3.11 python3; do
    [ -n "$candidate" ] || continue
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
      command -v "$candidate"
      return 0
    fi
  done
  return 1
}

missing=()
PY=$(find_python || true)
if [ -z "$PY" ]; then
  missing+=(python3 python3-venv python3-dev)
else
  "$PY" -c 'import ensurepip' 2>/dev/null || missing+=(python3-venv)
  "$PY" -c 'import os, sysconfig, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
    || missing+=(python3-dev)
fi
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v g++ >/dev/null 2>&1 || missing+=(g++)
command -v make >/dev/null 2>&1 || missing+=(make)
command -v git >/dev/null 2>&1 || missing+=(git)
# `cosim supervisor check`: the SPIN model checker, and a C compiler for its pan verifier.
command -v spin >/dev/null 2>&1 || missing+=(spin)
command -v gcc >/dev/null 2>&1 || missing+=(gcc)
# open3d needs libusb at import time; MuJoCo and PyBullet need nothing beyond libc.
ldconfig -p 2>/dev/null | grep -q 'libusb-1.0.so.0' || missing+=(libusb-1.0-0)
# Qt (PySide6 wheels, the dashboard) at run time, also off-screen: GL/EGL, xkbcommon, fontconfig, D-Bus, GLib, a font.
for lib_pkg in libGL.so.1:libgl1 libEGL.so.1:libegl1 libxkbcommon.so.0:libxkbcommon0 \
               libfontconfig.so.1:libfontconfig1 libdbus-1.so.3:libdbus-1-3 libglib-2.0.so.0:libglib2.0-0; do
  ldconfig -p 2>/dev/null | grep -q "${lib_pkg%%:*}" || missing+=("${lib_pkg##*:}")
done
[ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || missing+=(fonts-dejavu-core)

if [ ${#missing[@]} -gt 0 ]; then
  log "installing Debian packages: ${missing[*]}"
  if [ "$(id -u)" = 0 ]; then SUDO=""
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo -n"
  else die "missing Debian packages (${missing[*]}); install them with: sudo apt-get install ${missing[*]}"
  fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  PY=$(find_python) || die "no Python 3.11 after installing python3 (the ROS 2 Kilted wheels are built for CPython 3.11)"
fi
log "python: $PY ($("$PY" -c 'import platform; print(platform.python_version())'))"

# ---------------------------------------------------------------- 2. which ROS 2
mkdir -p "$ROSDIR"
if [ -n "${ROS_DISTRO:-}" ] && [ -n "${AMENT_PREFIX_PATH:-}" ] && "$PY" -c 'import rclpy' 2>/dev/null; then
  MODE="system:$ROS_DISTRO"
  log "ROS 2: using the sourced distribution '$ROS_DISTRO' (AMENT_PREFIX_PATH=${AMENT_PREFIX_PATH%%:*}...)"
else
  MODE="wheels:kilted"
  log "ROS 2: no sourced distribution found; using ROS 2 Kilted core wheels from PyPI in .venv"
fi
if [ -f "$ROSDIR/mode" ] && [ "$(cat "$ROSDIR/mode")" != "$MODE" ]; then
  log "ROS 2 source changed from $(cat "$ROSDIR/mode") to $MODE: rebuilding .venv and the interfaces"
  rm -rf "$VENV" "$ROSDIR/build" "$PREFIX"
fi
echo "$MODE" > "$ROSDIR/mode"

# ---------------------------------------------------------------- 3. virtual environment
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
  rm -rf "$VENV"
  log "creating .venv"
  if [ "${MODE%%:*}" = system ]; then
    "$PY" -m venv --system-site-packages "$VENV"
  else
    "$PY" -m venv "$VENV"
  fi
fi
REQS=(requirements/core.txt requirements/dev.txt requirements/docs.txt)
[ "${MODE%%:*}" = wheels ] && REQS+=(requirements/ros.txt)
PY_STAMP=$(hash_of "${REQS[@]}" requirements/nodeps.txt setup.py setup.cfg package.xml scripts/setup.sh <(echo "$MODE"))
if [ "$(cat "$VENV/.cosim-stamp" 2>/dev/null)" != "$PY_STAMP" ]; then
  log "installing pinned Python dependencies (first time: a few minutes)"
  "$VENV/bin/python" -m pip install $PIP_QUIET --disable-pip-version-check --upgrade 'pip==26.3' 'setuptools==79.0.1'
  req_args=()
  for r in "${REQS[@]}"; do req_args+=(-r "$r"); done
  "$VENV/bin/python" -m pip install $PIP_QUIET --disable-pip-version-check "${req_args[@]}"
  # benchmark-only packages whose metadata pins older numba/numpy than ours: without their dependencies
  "$VENV/bin/python" -m pip install $PIP_QUIET --disable-pip-version-check --no-deps -r requirements/nodeps.txt
  "$VENV/bin/python" -m pip install $PIP_QUIET --disable-pip-version-check --no-deps --no-build-isolation -e . \
    >"$ROSDIR/pip-editable.log" 2>&1 || { cat "$ROSDIR/pip-editable.log"; die "installing the project into .venv failed"; }
  echo "$PY_STAMP" > "$VENV/.cosim-stamp"
else
  log ".venv is up to date"
fi

# ---------------------------------------------------------------- 4. interfaces
# build_package SOURCE_DIR NAME: configure, build and install one rosidl package into .ros/install
# (log: .ros/build-NAME.log); with the ROS 2 wheels, against the venv's prefix.
build_package() {
  local source=$1 name=$2
  local build_dir="$ROSDIR/build/$name" log_file="$ROSDIR/build-$name.log"
  rm -rf "$build_dir"
  local args=(
    -S "$source" -B "$build_dir"
    -DCMAKE_INSTALL_PREFIX="$PREFIX"
    -DCMAKE_BUILD_TYPE=Release
    -DBUILD_TESTING=OFF
    -DPython3_EXECUTABLE="$VENV/bin/python"
    # relocatable: the libraries find each other and the Python extensions find the libraries
    -DCMAKE_INSTALL_RPATH='$ORIGIN;$ORIGIN/../../..'
  )
  if [ "${MODE%%:*}" = wheels ]; then
    args+=(
      # C and Python type support only, what rclpy loads (scripts/python_only_interfaces.cmake). With a ROS 2
      # distribution, the C++ one is built too: rosbag2 (`ros2 bag play`) and a C++ node under test use it.
      -DCMAKE_PROJECT_"$name"_INCLUDE="$ROOT/scripts/python_only_interfaces.cmake"
      -DCMAKE_PREFIX_PATH="$VENV"
      -DCMAKE_PROJECT_INCLUDE="$ROOT/scripts/wheel_prefix_fix.cmake"
      -DCOSIM_PYTHON_INCLUDE_DIR="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
      -DCOSIM_NUMPY_INCLUDE_DIR="$("$VENV/bin/python" -c 'import numpy; print(numpy.get_include())')"
    )
    export AMENT_PREFIX_PATH="$VENV"
  fi
  cmake "${args[@]}" >"$log_file" 2>&1 || { tail -30 "$log_file"; die "configuring $name failed (log: .ros/build-$name.log)"; }
  cmake --build "$build_dir" -j"$(nproc)" >>"$log_file" 2>&1 || { tail -30 "$log_file"; die "building $name failed (log: .ros/build-$name.log)"; }
  cmake --install "$build_dir" >>"$log_file" 2>&1 || die "installing $name failed (log: .ros/build-$name.log)"
}

IFACE_FILES=$(find cosim_validation_interfaces -type f | sort)
# shellcheck disable=SC2086
IF_STAMP=$(hash_of $IFACE_FILES scripts/wheel_prefix_fix.cmake scripts/python_only_interfaces.cmake <(echo "$MODE"))
if [ "$(cat "$PREFIX/.cosim-stamp" 2>/dev/null)" != "$IF_STAMP" ]; then
  log "building cosim_validation_interfaces into .ros/install"
  rm -rf "$PREFIX" "$ROSDIR/build"
  build_package cosim_validation_interfaces cosim_validation_interfaces
  echo "$IF_STAMP" > "$PREFIX/.cosim-stamp"
else
  log "interfaces are up to date"
fi

# ---------------------------------------------------------------- 4a. the compiled kernels, in the background
# numba compiles each hot kernel on first use into .cache/numba. On a fresh checkout every process that needs a
# kernel before another has cached it compiles it again (a campaign's workers, a session's nodes, the tests'
# workers): scripts/warm_caches.py runs the main job small once, beside the builds below, so later processes load
# what it compiled. Its stamp covers the files with kernels (numba itself recompiles a changed one on first use).
# shellcheck disable=SC2046
WARM_STAMP=$(hash_of $(grep -rl --include='*.py' -e '^import numba' -e '^from numba' cosim_validation | sort) scripts/warm_caches.py <(echo "$MODE"))
WARM_PID=""
BACKGROUND=()  # the set-up's background jobs: a set-up that fails meanwhile leaves nothing running
trap 'for pid in "${BACKGROUND[@]}"; do pkill -P "$pid" 2>/dev/null; kill "$pid" 2>/dev/null || true; done' EXIT
if [ "$(cat .cache/numba/.cosim-stamp 2>/dev/null)" != "$WARM_STAMP" ]; then
  log "compiling the numba kernels (scripts/warm_caches.py, in the background; log: .ros/warm.log)"
  mkdir -p .cache/numba
  (set +u; . scripts/env.sh && exec nice -n 5 python scripts/warm_caches.py) >"$ROSDIR/warm.log" 2>&1 &
  WARM_PID=$!
  BACKGROUND+=("$WARM_PID")
fi

# ---------------------------------------------------------------- 4b, 4c. vendored public interfaces
# Public interface packages built the same way, but only when no ROS 2 install on AMENT_PREFIX_PATH (or the
# wheels' venv) provides them: never a second copy.
# provider_of NAME: prints the prefix of a NAME that is not ours, if any
provider_of() {
  local prefix
  local IFS=:
  for prefix in ${AMENT_PREFIX_PATH:-} "$VENV"; do
    [ -n "$prefix" ] && [ "$prefix" != "$PREFIX" ] || continue
    [ -f "$prefix/share/$1/package.xml" ] && { echo "$prefix"; return 0; }
  done
  return 1
}
# vendored_package NAME STAMP_FILE: build third_party/NAME into .ros/install, or remove an earlier copy of it
# when another install provides NAME
vendored_package() {
  local name=$1 stamp_file="$PREFIX/$2" build="$ROSDIR/build/$1" provider stamp
  if provider=$(provider_of "$name"); then
    log "$name: provided by $provider; not building the vendored copy"
    if [ -f "$build/install_manifest.txt" ] && [ -d "$PREFIX/share/$name" ]; then
      log "$name: removing the copy built here earlier from .ros/install"
      xargs -d '\n' rm -f < "$build/install_manifest.txt"
      rm -rf "$PREFIX/share/$name" "$PREFIX/lib/python3.11/site-packages/$name" "$PREFIX/include/$name" "$stamp_file"
    fi
    return 0
  fi
  # shellcheck disable=SC2046
  stamp=$(hash_of $(find "third_party/$name" -type f | sort) scripts/wheel_prefix_fix.cmake scripts/python_only_interfaces.cmake <(echo "$MODE"))
  if [ "$(cat "$stamp_file" 2>/dev/null)" != "$stamp" ]; then
    log "building $name (vendored public definitions) into .ros/install"
    build_package "third_party/$name" "$name"
    echo "$stamp" > "$stamp_file"
  else
    log "$name is up to date"
  fi
}
# vendored_chain NAME:STAMP_FILE...: vendored_package of each, in order
vendored_chain() {
  local pair
  for pair in "$@"; do
    vendored_package "${pair%%:*}" "${pair#*:}"
  done
}
# Two chains side by side: each build is single-threaded much of its time (CMake's configuration, the rosidl
# generators, the install), so two use both cores where one after another used about one.
# 4b. The CRTK interfaces of dVRK 2.x and the Raven-II (third_party/crtk_msgs/SOURCE.md); 4c. the
# FollowJointTrajectory action of ros2_control's joint trajectory controller, served to an external controller under
# test (third_party/control_msgs/SOURCE.md, docs/EXTERNAL_NODES.md); 4d. the list_controllers service of a
# ros2_control controller manager, asked by ros2_control_driver at start (third_party/controller_manager_msgs/
# SOURCE.md, docs/ROBOTS.md). In the background:
vendored_chain crtk_msgs:.crtk-stamp control_msgs:.control-msgs-stamp \
  controller_manager_msgs:.controller-manager-msgs-stamp &
CHAIN_PID=$!
BACKGROUND+=("$CHAIN_PID")
# 4e. The services of MoveIt 2's move_group that the `moveit` controller calls (third_party/moveit_msgs/SOURCE.md,
# docs/MOVEIT.md), and the messages of the other packages they carry, in dependency order. Meanwhile:
vendored_chain shape_msgs:.shape-msgs-stamp octomap_msgs:.octomap-msgs-stamp \
  object_recognition_msgs:.object-recognition-msgs-stamp moveit_msgs:.moveit-msgs-stamp
wait "$CHAIN_PID" || die "building the vendored interfaces failed (see above)"

# ---------------------------------------------------------------- 5. meshes of the built-in anatomy
# meshes/anatomy/<name>.stl (patient frame) for RViz / Foxglove MESH_RESOURCE markers; 2.6 MB, so made here
MESH_STAMP=$(hash_of cosim_validation/anatomy/builtin_models.py cosim_validation/anatomy/implicit_shapes.py \
  cosim_validation/anatomy/radial_mesh.py cosim_validation/robots/visuals/anatomy_meshes.py cosim_validation/robots/visuals/stl_binary.py)
if [ "$(cat meshes/anatomy/.cosim-stamp 2>/dev/null)" != "$MESH_STAMP" ]; then
  log "exporting the built-in anatomy to meshes/anatomy"
  COSIM_CACHE_DIR="$ROOT/.cache" NUMBA_CACHE_DIR="$ROOT/.cache/numba" "$VENV/bin/python" scripts/make_meshes.py anatomy \
    >"$ROSDIR/meshes.log" 2>&1 || { cat "$ROSDIR/meshes.log"; die "exporting the anatomy meshes failed"; }
  echo "$MESH_STAMP" > meshes/anatomy/.cosim-stamp
fi

# ---------------------------------------------------------------- 6. the package in the ament index
# What colcon installs for an ament_python package (setup.py data_files, setup.cfg script_dir), made in
# .ros/install, which scripts/env.sh puts on AMENT_PREFIX_PATH: the package marker, share/cosim_validation
# with package.xml and the files of config/ launch/ urdf/ meshes/ (each a relative link into the checkout, as
# colcon --symlink-install makes them: folders are real, since `ros2 launch` walks them without following
# links) and lib/cosim_validation/<node> (the node entry points pip made in .venv/bin). Then
# get_package_share_directory('cosim_validation'), `ros2 run` and launch_ros find it as after a colcon build.
# Cheap and idempotent, so it runs every time (step 4 may have emptied the prefix; files may have come or gone).
SHARE="$PREFIX/share/cosim_validation"
rm -rf "$SHARE" "$PREFIX/lib/cosim_validation"
mkdir -p "$PREFIX/share/ament_index/resource_index/packages" "$SHARE" "$PREFIX/lib/cosim_validation"
cp resource/cosim_validation "$PREFIX/share/ament_index/resource_index/packages/cosim_validation"
while IFS= read -r file; do
  mkdir -p "$SHARE/$(dirname "$file")"
  ln -sfr "$ROOT/$file" "$SHARE/$file"
done < <(printf '%s\n' package.xml; find config launch urdf meshes -type f ! -name '.*' | sort)
NODES=$("$VENV/bin/python" -c 'from cosim_validation.live.session.node_parameters import NODE_PARAMETERS; print(*NODE_PARAMETERS)')
for node in $NODES; do
  [ -x "$VENV/bin/$node" ] || die "no entry point .venv/bin/$node (setup.py NODES and node_parameters.py differ)"
  ln -sfr "$VENV/bin/$node" "$PREFIX/lib/cosim_validation/$node"
done

# ---------------------------------------------------------------- 7. the package's bytecode
# Every node of a session is a process of its own and imports a few hundred of the package's modules. Where
# PYTHONDONTWRITEBYTECODE is set (as on some CI machines) Python never caches their bytecode, and every process
# compiled them again from source: 0.55 s of CPU more per import of the monitor node (2.47 s against 1.92 s,
# mean of five). compileall writes __pycache__ (ignored by git) whatever that variable says, and Python reads it;
# a source changed since is compiled in memory as before, and here again at the next set-up. Cheap: every time.
"$VENV/bin/python" -m compileall -q -j 0 cosim_validation >/dev/null || die "compiling the package's bytecode failed"

if [ -n "$WARM_PID" ]; then
  wait "$WARM_PID" || { tail -30 "$ROSDIR/warm.log"; die "compiling the numba kernels failed (log: .ros/warm.log)"; }
  echo "$WARM_STAMP" > .cache/numba/.cosim-stamp
  log "numba kernels compiled"
fi

BACKGROUND=()  # every one has ended
log "done. Use the environment with:  source scripts/env.sh"
