# Injected with -DCMAKE_PROJECT_<name>_INCLUDE=... into every interface package that `make setup` builds.
#
# The project's nodes and tools are Python: rclpy reaches a message through its C type support
# (rosidl_typesupport_c, with the Fast DDS and introspection C back ends) and its Python bindings. The C++
# generators (rosidl_generator_cpp and the three C++ type supports) make headers and libraries nothing here
# loads, and took 40 % of the set-up's interface builds (eight packages: 256 s with them, 151 s without, two
# cores; crtk_msgs alone 35 s to compile, 18 s without). So: find the default generators first (their package
# configuration is read once per configuration: the package's own find_package then returns at once) and drop
# the C++ ones from the extension point that rosidl_generate_interfaces() runs. A C++ node of the user's takes
# these messages from its own ROS 2 workspace.
find_package(rosidl_default_generators REQUIRED)
list(FILTER AMENT_EXTENSIONS_rosidl_generate_idl_interfaces EXCLUDE REGEX "_cpp:")
