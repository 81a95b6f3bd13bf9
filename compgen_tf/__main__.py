"""`python -m compgen_tf <command>`: see `compgen_tf.cli`."""

import sys

from compgen_tf.cli import main

sys.exit(main())
