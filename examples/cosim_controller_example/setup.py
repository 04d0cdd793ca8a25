"""ament_python packaging of the example controllers; the entry points make them known to cosim_validation."""

from setuptools import setup

PACKAGE = "cosim_controller_example"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=[PACKAGE],
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
    ],
    install_requires=["setuptools", "numpy"],
    zip_safe=True,
    maintainer="cosim_validation maintainers",
    maintainer_email="maintainers@cosim-validation.org",
    description="Example controllers under test for cosim_validation (two plugins and a standalone ROS 2 node)",
    license="Apache-2.0",
    entry_points={
        # the standalone node under test (README.md, "The example node"): rclpy and message packages only
        "console_scripts": ["tip_servo_node = cosim_controller_example.tip_servo_node:main"],
        # name -> factory make_controller(options, context); `controllers: {default: NAME}` picks one
        "cosim_validation.controllers": [
            "short_of_target = cosim_controller_example.short_of_target:make_controller",
            "tip_servo = cosim_controller_example.tip_servo:make_controller",
        ],
    },
)
