from skillbook.cli.app import main

main()
