# Source this file (bash or zsh) after `make setup`:  source scripts/env.sh
# It puts the project's .venv, ROS 2 and cosim_validation_interfaces (.ros/install) on the paths,
# so that `cosim`, every node executable and pytest find rclpy and the interfaces.
if [ -n "${BASH_SOURCE[0]:-}" ]; then _cosim_here="${BASH_SOURCE[0]}"; else _cosim_here="$0"; fi
COSIM_ROOT=$(cd "$(dirname "$_cosim_here")/.." && pwd)
export COSIM_ROOT
unset _cosim_here
if [ ! -f "$COSIM_ROOT/.venv/bin/activate" ]; then
  echo "cosim: no .venv in $COSIM_ROOT; run 'make setup' first" >&2
  return 1 2>/dev/null || exit 1
fi
# shellcheck disable=SC1091
. "$COSIM_ROOT/.venv/bin/activate"

_cosim_prepend() {  # _cosim_prepend VAR DIR: put DIR first in the colon list VAR, once
  local current
  eval "current=\${$1:-}"
  case ":$current:" in *":$2:"*) ;; *) eval "export $1=\"$2\${current:+:\$current}\"" ;; esac
}
_cosim_prefix="$COSIM_ROOT/.ros/install"
case "$(cat "$COSIM_ROOT/.ros/mode" 2>/dev/null)" in
  wheels:*) _cosim_prepend AMENT_PREFIX_PATH "$VIRTUAL_ENV" ;;  # the venv is a ROS prefix
esac
_cosim_prepend AMENT_PREFIX_PATH "$_cosim_prefix"
_cosim_prepend PYTHONPATH "$_cosim_prefix/lib/python3.11/site-packages"
_cosim_prepend LD_LIBRARY_PATH "$_cosim_prefix/lib"
export RMW_IMPLEMENTATION="${RMW_IMPLEMENTATION:-rmw_fastrtps_cpp}"
# compiled numba kernels are cached here, so a second process does not pay the compile time
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-$COSIM_ROOT/.cache/numba}"
# slow, code-determined results (e.g. the built-in anatomy meshes) are kept here
export COSIM_CACHE_DIR="${COSIM_CACHE_DIR:-$COSIM_ROOT/.cache}"
# numba parallel kernels on OpenMP (libgomp ships with gcc); the TBB found in the venv is too old and warns
export NUMBA_THREADING_LAYER="${NUMBA_THREADING_LAYER:-omp}"
unset _cosim_prefix
unset -f _cosim_prepend
