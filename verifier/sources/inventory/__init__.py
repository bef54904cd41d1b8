"""Inventories: YAML files describing clusters, loaded into a validated `Inventory`."""

from verifier.sources.inventory.loader import API_VERSION, load_inventory, load_inventory_text
from verifier.sources.inventory.model import CatalogModel, Inventory, Link, Obj

__all__ = ["API_VERSION", "CatalogModel", "Inventory", "Link", "Obj", "load_inventory", "load_inventory_text"]
