from skillbook.cli.entry import main

main()
