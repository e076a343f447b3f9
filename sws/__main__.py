from sws.cli import main

main()
