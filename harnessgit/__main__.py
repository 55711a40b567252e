from harnessgit.cli import main

raise SystemExit(main())
