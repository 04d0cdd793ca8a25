"""Learned error injection ([Barragan et al. 2024]): a simulated robot that errs like the physical one.

The dataset of a physical robot's settled samples (:mod:`~.dataset`, :mod:`~.dataset_io`, :mod:`~.dataset_cleaning`),
hand-eye calibration AX = YB (:mod:`~.hand_eye`) with the arm's joint offsets, ratios, lost motion and wrist
couplings (:mod:`~.kinematic_calibration`, :mod:`~.joint_map`), the two error networks NN1 / NN2 (:mod:`~.features`,
:mod:`~.training`, :mod:`~.mlp`, :mod:`~.model_file`) and their injection into a simulated robot as the ``errors``
robot filter (:mod:`~.injection`). ROS-free; docs/ERRORS.md describes the method, the formats and the results.
"""
