"""`fairseq-fast-user-dir`: print the folder to pass to fairseq's --user-dir."""
import os


def user_dir() -> str:
    return os.path.dirname(os.path.abspath(__file__))


def main() -> None:
    print(user_dir())


if __name__ == "__main__":
    main()
