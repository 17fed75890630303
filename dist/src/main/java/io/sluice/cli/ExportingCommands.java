package io.sluice.cli;

import io.sluice.protocol.cluster.PartitionReplica;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import tools.jackson.databind.JsonNode;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/** {@code admin exporting pause|resume|status}: CONTRACT §3 "Exporting control". */
@Command(
    name = "exporting",
    mixinStandardHelpOptions = true,
    description = "Pause, soft-pause or resume exporting on every (broker, partition) pair, or show its state.",
    subcommands = {ExportingCommands.Pause.class, ExportingCommands.Resume.class, ExportingCommands.Status.class})
final class ExportingCommands extends CommandGroup
{
    /** Options of the mutating calls: which pairs, and how often to retry the ones that did not succeed. */
    static final class RetryOptions
    {
        @Option(
            names = "--target",
            paramLabel = "BROKER:PARTITION",
            converter = PairConverter.class,
            description = "Act on this pair only (repeatable); default: every pair of the cluster.")
        List<PartitionReplica> targets = new ArrayList<>();

        @Option(
            names = "--retries",
            paramLabel = "N",
            defaultValue = "0",
            description = "Retry the failed or timed-out pairs (only those) up to N times (default: ${DEFAULT-VALUE}).")
        int retries;

        @Option(
            names = "--retry-backoff",
            paramLabel = "DURATION",
            defaultValue = "1s",
            converter = DurationConverter.class,
            description = "Wait before the first retry; doubles each round, at most 30s (default: ${DEFAULT-VALUE}).")
        Duration backoff;

        void validate(final CommandSpec spec)
        {
            if (retries < 0)
            {
                throw new CommandLine.ParameterException(
                    spec.commandLine(), "--retries must be 0 or more, was " + retries);
            }
        }
    }

    /** Pause, soft pause and resume: the same call with retries (see {@link ExportingCall}), each to its own path. */
    abstract static class ExportingChange extends GatewayCommand
    {
        @Spec
        CommandSpec spec;

        @Mixin
        RetryOptions retry;

        ExportingChange(final CliConsole console)
        {
            super(console);
        }

        /** Posts to {@code path} with the retry options; {@code name} is what messages call the change. */
        int post(final String name, final String path) throws GatewayUnreachableException, InterruptedException
        {
            retry.validate(spec);
            return new ExportingCall(console, gateway, name, path).run(retry);
        }
    }

    @Command(
        name = "pause",
        mixinStandardHelpOptions = true,
        description = {
            "Pause exporting: after exit 0 no record is exported until a resume succeeds.",
            "With --soft, exporters keep exporting but positions are not acknowledged (nothing is compacted)."})
    static final class Pause extends ExportingChange
    {
        @Option(names = "--soft", description = "Soft pause: keep exporting, stop acknowledging positions.")
        boolean soft;

        @Option(names = "--lease", paramLabel = "DURATION",
            description = "ISO-8601 duration (PT30M): the hold ends by itself when it runs out; the gateway checks it.")
        String lease;

        Pause(final CliConsole console)
        {
            super(console);
        }

        @Override
        public Integer call() throws GatewayUnreachableException, InterruptedException
        {
            final String leased = lease == null ? "" :
                "lease=" + java.net.URLEncoder.encode(lease, java.nio.charset.StandardCharsets.UTF_8);
            return soft ? post("soft pause", "/exporting/pause?soft=true" + (leased.isEmpty() ? "" : "&" + leased)) :
                post("pause", "/exporting/pause" + (leased.isEmpty() ? "" : "?" + leased));
        }
    }

    @Command(
        name = "resume",
        mixinStandardHelpOptions = true,
        description = "Resume exporting (undoes a pause or a soft pause).")
    static final class Resume extends ExportingChange
    {
        Resume(final CliConsole console)
        {
            super(console);
        }

        @Override
        public Integer call() throws GatewayUnreachableException, InterruptedException
        {
            return post("resume", "/exporting/resume");
        }
    }

    @Command(
        name = "status",
        mixinStandardHelpOptions = true,
        description = "Show every pair's exporting state and positions, and the cluster's overall state.")
    static final class Status extends GatewayCommand
    {
        Status(final CliConsole console)
        {
            super(console);
        }

        @Override
        public Integer call() throws GatewayUnreachableException
        {
            return printAnswer("exporting status", gateway.connect(console).get("/exporting"), this::printTable);
        }

        private void printTable(final JsonNode exporting)
        {
            final List<JsonNode> targets = new ArrayList<>();
            exporting.path("targets").forEach(targets::add);
            targets.sort((a, b) -> TargetPairs.of(a).compareTo(TargetPairs.of(b)));
            // POSITION is the acknowledged position (JSON exportedPosition), SENT what the leader sent to the sinks
            // (JSON sentPosition; leader pairs only): the same names as in `admin exporters`.
            final Table table = new Table("PAIR", "ROLE", "STATE", "POSITION", "SENT", "LAST", "LAG", "SENT LAG");
            for (final JsonNode target : targets)
            {
                final long acknowledged = target.path("exportedPosition").asLong(-1);
                final JsonNode sentNode = target.path("sentPosition");
                final long sent = sentNode.isNumber() ? sentNode.asLong() : -1;
                final long last = target.path("lastPosition").asLong(-1);
                table.row(
                    TargetPairs.of(target).label(),
                    target.path("role").asString("-"),
                    target.path("state").asString("UNKNOWN"),
                    acknowledged < 0 ? "-" : acknowledged,
                    sent < 0 ? "-" : sent,
                    last < 0 ? "-" : last,
                    acknowledged < 0 || last < 0 ? "-" : Math.max(0, last - acknowledged),
                    sent < 0 || last < 0 ? "-" : Math.max(0, last - sent));
            }
            console.out().println("exporting: " + exporting.path("state").asString("UNKNOWN"));
            table.print(console.out());
        }
    }

    /** picocli converter for {@code B:P}. */
    static final class PairConverter implements CommandLine.ITypeConverter<PartitionReplica>
    {
        @Override
        public PartitionReplica convert(final String value)
        {
            try
            {
                return PartitionReplica.parse(value);
            }
            catch (final IllegalArgumentException e)
            {
                throw new CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }

    /** The pairs in partition-then-broker order (the gateway's), each once. */
    static List<PartitionReplica> sorted(final List<PartitionReplica> pairs)
    {
        return new ArrayList<>(new TreeSet<>(pairs));
    }
}
