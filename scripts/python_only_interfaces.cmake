# Injected with -DCMAKE_PROJECT_<name>_INCLUDE=... into every interface package that `make setup` builds against
# the ROS 2 wheels from PyPI (no rclcpp, no rosbag2 there). With a sourced ROS 2 distribution it is not used:
# `ros2 bag play` (rosbag2 publishes through rclcpp) and a C++ node under test need the C++ type support.
#
# The project's nodes and tools are Python: rclpy reaches a message through its C type support
# (rosidl_typesupport_c, with the Fast DDS and introspection C back ends) and its Python bindings. The C++
# generators (rosidl_generator_cpp and the three C++ type supports) make headers and libraries nothing here
# loads, and took 40 % of the set-up's interface builds (eight packages: 256 s with them, 151 s without, two
# cores; crtk_msgs alone 35 s to compile, 18 s without). So: find the default generators first (their package
# configuration is read once per configuration: the package's own find_package then returns at once) and drop
# the C++ ones from the extension point that rosidl_generate_interfaces() runs.
find_package(rosidl_default_generators REQUIRED)
list(FILTER AMENT_EXTENSIONS_rosidl_generate_idl_interfaces EXCLUDE REGEX "_cpp:")
