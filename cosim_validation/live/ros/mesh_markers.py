"""visualization_msgs/Marker MESH_RESOURCE <-> (URI, pose) for the anatomy shown from the package's STL files.

A MESH_RESOURCE marker names a mesh file by URI (``package://`` resolved by the viewer through the ament
index, or ``file://``), placed by the marker's pose in its frame, scaled by ``scale`` (1 for metres), in the
marker's colour unless ``mesh_use_embedded_materials`` (visualization_msgs/Marker.msg, ROS 2 Kilted).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cosim_validation.live.ros.convert import pose_from_msg, pose_to_msg


def mesh_resource_to_marker(
    uri: str,
    T_frame_mesh: np.ndarray,
    marker_id: int,
    ns: str,
    rgba: tuple[float, float, float, float],
    frame_id: str = "base_link",
) -> Any:
    """A MESH_RESOURCE marker showing the file ``uri`` at pose ``T_frame_mesh`` ((4, 4), metres) in ``frame_id``.

    Args:
        uri: The mesh file's URI (``package://`` or ``file://``), shown at scale 1: its coordinates as [m].
        T_frame_mesh: The mesh's pose in ``frame_id``, shape (4, 4), translation in [m].
        marker_id: The marker's id within ``ns``.
        ns: The marker's namespace.
        rgba: The colour, each channel in [0, 1].
        frame_id: The frame the pose is in.
    """
    from std_msgs.msg import ColorRGBA, Header
    from visualization_msgs.msg import Marker

    T = np.asarray(T_frame_mesh, dtype=np.float64)
    marker = Marker(
        header=Header(frame_id=frame_id),
        ns=ns,
        id=marker_id,
        type=Marker.MESH_RESOURCE,
        action=Marker.ADD,
        frame_locked=True,
        mesh_resource=uri,
        mesh_use_embedded_materials=False,
    )
    marker.pose = pose_to_msg(T[:3, 3], rotation_quaternion(T[:3, :3]))
    marker.scale.x = marker.scale.y = marker.scale.z = 1.0
    marker.color = ColorRGBA(r=rgba[0], g=rgba[1], b=rgba[2], a=rgba[3])
    return marker


def mesh_resource_from_marker(marker: Any) -> tuple[str, np.ndarray]:
    """(URI, (4, 4) pose of the mesh in the marker's frame) of a MESH_RESOURCE marker.

    Args:
        marker: A visualization_msgs/Marker MESH_RESOURCE (an rclpy or rosbags message).

    Returns:
        The mesh file's URI and ``T_frame_mesh``, the mesh's pose in the marker's frame, shape (4, 4), translation
        in [m].
    """
    from cosim_validation.robots.virtual.quaternion import quat_matrix

    position, quat_wxyz = pose_from_msg(marker.pose)
    T = np.eye(4)
    T[:3, :3] = quat_matrix(quat_wxyz)
    T[:3, 3] = position
    return str(marker.mesh_resource), T


def rotation_quaternion(R: np.ndarray) -> np.ndarray:
    """The unit quaternion (w, x, y, z), w >= 0, of a rotation matrix.

    numpy alone: scipy's Rotation cost the markers node half a second of imports. The symmetric matrix below is
    4 q q^T; its row with the largest diagonal entry gives q without cancellation (a half turn included).

    Args:
        R: A proper rotation matrix, shape (3, 3).
    """
    (a, b, c), (d, e, f), (g, h, k) = np.asarray(R, dtype=np.float64)
    outer = np.array(
        [
            [1.0 + a + e + k, h - f, c - g, d - b],
            [h - f, 1.0 + a - e - k, b + d, c + g],
            [c - g, b + d, 1.0 - a + e - k, f + h],
            [d - b, c + g, f + h, 1.0 - a - e + k],
        ]
    )
    row = outer[int(np.argmax(np.diag(outer)))]
    quat = row / np.linalg.norm(row)
    return np.asarray(-quat if quat[0] < 0.0 else quat)
