import sys

from pld.cli import main

sys.exit(main())
