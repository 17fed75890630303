package io.sluice.cli;

import picocli.CommandLine.Command;
import tools.jackson.databind.JsonNode;


/**
 * {@code admin exporters}: the exporters view of {@code GET /actuator/exporters}, one row per exporter and
 * partition: position, lag, state and last error.
 */
@Command(
    name = "exporters",
    mixinStandardHelpOptions = true,
    description = "Show every exporter per partition: acknowledged position, lag, state (EXPORTING, RETRYING, "
        + "PAUSED, SOFT_PAUSED, UNKNOWN) and last error.")
final class ExportersCommand extends GatewayCommand
{
    ExportersCommand(final CliConsole console)
    {
        super(console);
    }

    @Override
    public Integer call() throws GatewayUnreachableException
    {
        return printAnswer("exporters", gateway.connect(console).get("/exporters"), this::printView);
    }

    private void printView(final JsonNode view)
    {
        // POSITION is the acknowledged position, SENT what was sent to the sink: as in `admin exporting status`.
        final Table table =
            new Table("EXPORTER", "TYPE", "PARTITION", "POSITION", "LAG", "SENT", "SENT LAG", "STATE", "LAST ERROR");
        for (final JsonNode exporter : view.path("exporters"))
        {
            for (final JsonNode partition : exporter.path("partitions"))
            {
                table.row(exporter.path("id").asString(), text(exporter.path("type")),
                    partition.path("partitionId").asString(), number(partition.path("position")),
                    number(partition.path("lag")), number(partition.path("sentPosition")),
                    number(partition.path("sentLag")), partition.path("state").asString("UNKNOWN"),
                    text(partition.path("lastError")));
            }
        }
        if (table.size() == 0)
        {
            console.out().println("no exporter is running");
            return;
        }
        table.print(console.out());
    }

    private static String text(final JsonNode value)
    {
        return value.isMissingNode() || value.isNull() ? "-" : value.asString();
    }

    private static String number(final JsonNode value)
    {
        return value.isNumber() && value.asLong() >= 0 ? value.asString() : "-";
    }
}
