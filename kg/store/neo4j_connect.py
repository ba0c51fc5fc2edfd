"""Open a Neo4j driver for the edges (CLI, app lifespan); a refused connection becomes one StoreError line."""

from __future__ import annotations

import re

import neo4j
from neo4j.exceptions import AuthError, ClientError, ConfigurationError, DriverError, Neo4jError

from kg.errors import StoreError

DEFAULT_URI = "bolt://localhost:7687"
DEFAULT_USER = "neo4j"
SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")


def connect(uri: str, user: str, password: str, database: str | None = None, *,
            timeout_s: float = 10.0) -> neo4j.Driver:
    """A driver whose server answered, with these credentials, in ``database``; the caller closes it."""
    if uri.partition("://")[0] not in SCHEMES:
        raise StoreError(f"{uri}: not a Bolt URI; use bolt://HOST:7687 or neo4j://HOST:7687")
    try:
        driver = neo4j.GraphDatabase.driver(uri, auth=(user, password), connection_timeout=timeout_s,
                                            connection_acquisition_timeout=timeout_s)
    except (ValueError, ConfigurationError) as exc:
        raise StoreError(f"{uri}: not a Neo4j URI ({exc}); use bolt://HOST:7687 or neo4j://HOST:7687") from None
    try:
        driver.verify_connectivity()
        driver.execute_query("RETURN 1", database_=database)
    except AuthError:
        driver.close()
        raise StoreError(f"{uri}: the server refused user '{user}' with this password "
                         f"(set --neo4j-user/--neo4j-password or NEO4J_USER/NEO4J_PASSWORD)") from None
    except ClientError as exc:
        driver.close()
        where = f"database '{database}'" if database else "the default database"
        raise StoreError(f"{uri}: {where} cannot be used: {' '.join((exc.message or str(exc)).split())}") from None
    except (Neo4jError, DriverError, OSError) as exc:
        driver.close()
        text = " ".join(str(exc).split()) or type(exc).__name__
        m = re.search(r"\(reason \[Errno \d+\] ([^)]*)\)", text)
        reason = m.group(1) if m else text
        raise StoreError(f"{uri}: cannot reach a Neo4j server ({reason}); is it running?") from None
    return driver
