"""`harnessgit sync`: share every harnessgit ref and record with a remote, safely."""
