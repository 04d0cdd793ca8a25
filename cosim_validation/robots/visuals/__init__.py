"""What viewers (RViz, Foxglove) show: the package's mesh files and the ``package://`` URIs that name them.

- :mod:`stl_binary`: binary STL read/write of triangle arrays (exact float32 round trip);
- :mod:`link_visuals`: the robot's link visuals, the project's own simple shapes made from the URDF;
- :mod:`anatomy_meshes`: the built-in anatomy exported as STL, and the ``MESH_RESOURCE`` placement of a
  loaded model checked against the file it names;
- :mod:`package_uri`: ``package://cosim_validation/...`` to files, and a URDF copy with file paths for
  engines that cannot resolve package URIs (PyBullet).
"""

from cosim_validation.robots.visuals.package_uri import PACKAGE_URI_PREFIX, package_uri, resolve_package_uri

__all__ = ["PACKAGE_URI_PREFIX", "package_uri", "resolve_package_uri"]
