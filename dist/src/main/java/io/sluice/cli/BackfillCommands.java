package io.sluice.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import tools.jackson.databind.JsonNode;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;

/** {@code admin backfill start|status|cancel}: CONTRACT §3 "Reset to latest and backfill". */
@Command(
    name = "backfill",
    mixinStandardHelpOptions = true,
    description = "Reset a lagging exporter to the latest positions and backfill the skipped ranges.",
    subcommands = {BackfillCommands.Start.class, BackfillCommands.Status.class, BackfillCommands.Cancel.class})
final class BackfillCommands extends CommandGroup
{
    @Command(
        name = "start",
        mixinStandardHelpOptions = true,
        description = {
            "Reset EXPORTER to the latest positions and backfill the skipped ranges with N tasks.",
            "EXPORTER moves to each partition's latest committed position; N supervised tasks export the skipped",
            "ranges. Try --dry-run first: it prints the plan and changes nothing."})
    static final class Start extends GatewayCommand
    {
        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "EXPORTER", description = "Exporter id, e.g. file.")
        String exporterId;

        @Option(
            names = "--tasks",
            paramLabel = "N",
            description = "Backfill tasks (default: one per partition with a non-empty range).")
        Integer tasks;

        @Option(names = "--dry-run", description = "Only show the plan; nothing changes.")
        boolean dryRun;

        Start(final CliConsole console)
        {
            super(console);
        }

        @Override
        public Integer call() throws GatewayUnreachableException
        {
            if (tasks != null && tasks < 1)
            {
                throw new CommandLine.ParameterException(spec.commandLine(), "--tasks must be 1 or more, was " + tasks);
            }
            if (exporterId.isBlank())
            {
                throw new CommandLine.ParameterException(spec.commandLine(), "EXPORTER must not be blank");
            }
            final StringBuilder path = new StringBuilder("/exporters/")
                .append(encode(exporterId))
                .append("/resetToLatestAndBackfill");
            char separator = '?';
            if (tasks != null)
            {
                path.append(separator).append("backfillTaskCount=").append(tasks);
                separator = '&';
            }
            if (dryRun)
            {
                path.append(separator).append("dryRun=true");
            }

            final GatewayAnswer answer = gateway.connect(console).post(path.toString());
            final int exitCode = printAnswer("backfill start " + exporterId, answer, this::printPlan);
            final String registered = answer.isSuccess() ? "" : answer.json().path("backfillId").asString("");
            if (!registered.isEmpty())
            {
                // A partial start: some partitions were reset, their backfill runs and must be followed.
                console.err().println("admin: backfill " + registered + " was registered for the partitions"
                    + " that answered; follow it with 'admin backfill status " + registered + " --watch'");
            }
            return exitCode;
        }

        private void printPlan(final JsonNode plan)
        {
            final String backfillId = plan.path("backfillId").asString("");
            // Ranges are inclusive: [fromPosition, toPosition].
            final Table ranges = new Table("PARTITION", "FROM", "TO", "POSITIONS");
            long records = 0;
            for (final JsonNode range : plan.path("ranges"))
            {
                final long from = range.path("fromPosition").asLong();
                final long to = range.path("toPosition").asLong();
                final long length = Math.max(0, to - from + 1);
                records += length;
                ranges.row(range.path("partitionId").asInt(), from, to, length);
            }
            // With fewer tasks than lagging partitions a task covers several partitions, listed once for each:
            // count tasks by id, not entries.
            final Set<Integer> taskIds = new HashSet<>();
            for (final JsonNode task : plan.path("tasks"))
            {
                taskIds.add(task.path("taskId").asInt());
            }
            final int taskCount = taskIds.size();
            if (dryRun)
            {
                console.out().println("dry run of backfill for exporter " + exporterId + ": " + ranges.size()
                    + " ranges, " + records + " positions, " + taskCount + " tasks; nothing changed");
            }
            else
            {
                console.out().println("backfill " + backfillId + " started for exporter " + exporterId + ": "
                    + ranges.size() + " ranges, " + records + " positions, " + taskCount + " tasks");
            }
            ranges.print(console.out());
            for (final JsonNode gone : plan.path("unavailable"))
            {
                // Compacted before the backfill: reported, never exported, and no task fails for it.
                console.out().println("partition " + gone.path("partitionId").asInt() + ": positions " +
                    gone.path("fromPosition").asLong() + ".." + gone.path("toPosition").asLong() +
                    " are no longer held (compacted) and cannot be backfilled");
            }
            if (!dryRun && !backfillId.isEmpty())
            {
                console.out().println("follow it with: admin backfill status " + backfillId + " --watch");
            }
        }
    }

    @Command(
        name = "status",
        mixinStandardHelpOptions = true,
        description = {
            "Show every backfill, or one with its tasks.",
            "With --watch, show a live progress bar until it ends; exit 0 only when it SUCCEEDED."})
    static final class Status extends GatewayCommand
    {
        @Spec
        CommandSpec spec;

        @Parameters(index = "0", arity = "0..1", paramLabel = "ID", description = "Backfill id.")
        String backfillId;

        @Option(names = "--watch", description = "Follow the backfill until SUCCEEDED, FAILED or CANCELLED.")
        boolean watch;

        @Option(
            names = "--interval",
            paramLabel = "DURATION",
            defaultValue = "1s",
            converter = DurationConverter.class,
            description = "Poll interval of --watch (default: ${DEFAULT-VALUE}); without a terminal a line is "
                + "printed every 5s at most.")
        Duration interval;

        Status(final CliConsole console)
        {
            super(console);
        }

        @Override
        public Integer call() throws GatewayUnreachableException, InterruptedException
        {
            if (watch && backfillId == null)
            {
                throw new CommandLine.ParameterException(spec.commandLine(), "--watch needs a backfill ID");
            }
            final ManagementClient client = gateway.connect(console);
            if (watch)
            {
                return new BackfillWatch(console, client, backfillId, interval).run();
            }

            final boolean every = backfillId == null;
            return printAnswer("backfill status",
                client.get(every ? "/backfills" : "/backfills/" + encode(backfillId)),
                every ? this::printList : this::printOne);
        }

        private void printList(final JsonNode json)
        {
            final JsonNode backfills = json.isArray() ? json : json.path("backfills");
            final Table table = new Table("ID", "EXPORTER", "STATE", "PROGRESS", "TASKS");
            for (final JsonNode backfill : backfills)
            {
                final BackfillProgress progress = BackfillProgress.of(backfill);
                table.row(progress.backfillId(), backfill.path("exporterId").asString("-"), progress.state(),
                    String.format("%.1f%%", progress.fraction() * 100), backfill.path("tasks").size());
            }
            if (table.size() == 0)
            {
                console.out().println("no backfills");
                return;
            }
            table.print(console.out());
        }

        private void printOne(final JsonNode backfill)
        {
            final BackfillProgress progress = BackfillProgress.of(backfill);
            console.out().println("backfill " + progress.backfillId() + " of exporter "
                + backfill.path("exporterId").asString("-") + ": " + progress.state() + ", "
                + String.format("%.1f%%", progress.fraction() * 100) + " (" + progress.exportedRecords() + "/"
                + progress.totalRecords() + " positions)");
            final Table table = new Table("TASK", "PARTITION", "FROM", "TO", "EXPORTED UP TO", "ATTEMPTS", "STATE", "FAILURE");
            int index = 0;
            for (final JsonNode task : backfill.path("tasks"))
            {
                final JsonNode upTo = task.path("exportedUpTo");
                table.row(task.path("taskId").asString(String.valueOf(index)), task.path("partitionId").asInt(),
                    task.path("fromPosition").asLong(), task.path("toPosition").asLong(),
                    upTo.isNumber() && upTo.asLong() >= task.path("fromPosition").asLong() ? upTo.asLong() : "-",
                    task.path("attempts").asInt(0), task.path("state").asString("-"),
                    task.path("failureReason").asString(""));
                index++;
            }
            table.print(console.out());
            final JsonNode unavailable = backfill.path("unavailablePartitions");
            if (unavailable.isArray() && !unavailable.isEmpty())
            {
                console.out().println("partitions without a reachable leader (their tasks are missing above): "
                    + unavailable);
            }
        }
    }

    @Command(name = "cancel", mixinStandardHelpOptions = true, description = "Cancel a running backfill.")
    static final class Cancel extends GatewayCommand
    {
        @Parameters(index = "0", paramLabel = "ID", description = "Backfill id.")
        String backfillId;

        Cancel(final CliConsole console)
        {
            super(console);
        }

        @Override
        public Integer call() throws GatewayUnreachableException
        {
            return printAnswer("backfill cancel " + backfillId,
                gateway.connect(console).delete("/backfills/" + encode(backfillId)), this::printCancelled);
        }

        private void printCancelled(final JsonNode backfill)
        {
            final String state = backfill.path("state").asString("");
            console.out().println("backfill " + backfillId + " cancelled" + (state.isEmpty() ? "" : " (state " + state + ")"));
        }
    }

    static String encode(final String id)
    {
        return URLEncoder.encode(id, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
