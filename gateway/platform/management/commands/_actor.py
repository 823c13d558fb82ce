"""Who the audit log names for a staff action run from the command line."""
import getpass


def cli_actor(command) -> str:
    """'cli:<OS user>:<command>', e.g. 'cli:deploy:create_merchant'."""
    try:
        user = getpass.getuser()
    except Exception:  # no user name in this environment (some containers)
        user = "unknown"
    return f"cli:{user}:{command.__module__.rsplit('.', 1)[-1]}"
