from crax.cli.commands import main

main()
