"""Virtual robots behind one protocol (MuJoCo default, PyBullet second engine) and trajectory execution."""
