"""topolog: verify AI infrastructure topology with Datalog rules and Cedar policies."""

__version__ = "0.2.0"
