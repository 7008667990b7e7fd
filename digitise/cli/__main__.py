"""``python -m digitise.cli``: the console entry point."""

from digitise.cli import main

if __name__ == "__main__":
    main()
