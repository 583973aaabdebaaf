"""An MCP server (the `mcp` SDK's own ``MCPServer``, over stdio) with the two tools of the
currency chain in tests/playbook/test_routine.py, both declared read-only."""

from mcp.server import MCPServer
from mcp.types import ToolAnnotations

COUNTRIES = {
    "Freedonia": ("Fredville", "FDK", "1.25"),
    "Sylvania": ("Sylburg", "SYK", "0.5"),
    "Ruritania": ("Strelsau", "RUK", "2.75"),
    "Oberland": ("Oberburg", "OBK", "3.5"),
}
server = MCPServer("money")
LOOKUP = ToolAnnotations(read_only_hint=True)


@server.tool(annotations=LOOKUP)
def country_info(country: str) -> str:
    """Facts about a country."""
    capital, code, _ = COUNTRIES[country]
    return f"{country}: capital {capital}, currency code {code}, calling code +99"


@server.tool(annotations=LOOKUP)
def exchange_rate(currency: str) -> str:
    """Value of one unit of a currency in USD."""
    rate = next(r for _, c, r in COUNTRIES.values() if c == currency)
    return f"1 {currency} = {rate} USD"


if __name__ == "__main__":
    server.run()
