package io.sluice.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import tools.jackson.databind.JsonNode;

import java.time.Duration;

/** {@code admin backup take|status|list|delete|verify}: CONTRACT §8, over {@code /actuator/backups}. */
@Command(
    name = "backup",
    mixinStandardHelpOptions = true,
    description = "Take, follow, list, delete and verify backups of every partition.",
    subcommands = {BackupCommands.Take.class, BackupCommands.Status.class, BackupCommands.ListBackups.class,
        BackupCommands.Delete.class, BackupCommands.Verify.class})
final class BackupCommands extends CommandGroup
{
    private static final String TERMINAL = "COMPLETED FAILED INCOMPLETE";

    @Command(name = "take", mixinStandardHelpOptions = true, description = {
        "Take a backup of every partition in one call.",
        "Answered once the cut is committed; the brokers upload it afterwards. With --wait, follow it until it",
        "COMPLETED (exit 0) or FAILED (exit 1)."})
    static final class Take extends GatewayCommand
    {
        @Option(names = "--id", paramLabel = "N", description = "The backup id (default: now in epoch milliseconds).")
        Long id;

        @Option(names = "--wait", description = "Follow the backup until it completes or fails.")
        boolean waitForIt;

        @Option(names = "--interval", paramLabel = "DURATION", defaultValue = "1s", converter = DurationConverter.class,
            description = "Poll interval of --wait (default: ${DEFAULT-VALUE}).")
        Duration interval;

        Take(final CliConsole console)
        {
            super(console);
        }

        @Override
        public Integer call() throws GatewayUnreachableException
        {
            final ManagementClient client = gateway.connect(console);
            final GatewayAnswer answer = id == null ? client.post("/backups") :
                client.postJson("/backups", "{\"backupId\": " + id + "}");
            if (!answer.isSuccess())
            {
                return reportError("backup take", answer);
            }
            final long backupId = answer.json().path("backupId").asLong();
            if (gateway.output() == OutputFormat.json && !waitForIt)
            {
                console.out().println(answer.body());
                return ExitCode.SUCCEEDED;
            }
            console.out().println("backup " + backupId + " IN_PROGRESS: cut committed, the brokers upload it");
            return waitForIt ? follow(console, client, gateway.output(), backupId, interval) : ExitCode.SUCCEEDED;
        }
    }

    @Command(name = "status", mixinStandardHelpOptions = true, description = {
        "Show one backup: its state and every partition's checkpoint.",
        "With --watch, follow it until it COMPLETED (exit 0) or FAILED (exit 1)."})
    static final class Status extends GatewayCommand
    {
        @Parameters(index = "0", paramLabel = "ID", description = "The backup id.")
        long id;

        @Option(names = "--watch", description = "Follow the backup until it completes or fails.")
        boolean watch;

        @Option(names = "--interval", paramLabel = "DURATION", defaultValue = "1s", converter = DurationConverter.class,
            description = "Poll interval of --watch (default: ${DEFAULT-VALUE}).")
        Duration interval;

        Status(final CliConsole console)
        {
            super(console);
        }

        @Override
        public Integer call() throws GatewayUnreachableException
        {
            final ManagementClient client = gateway.connect(console);
            if (watch)
            {
                return follow(console, client, gateway.output(), id, interval);
            }
            return printAnswer("backup status", client.get("/backups/" + id), (json) -> printBackup(console, json));
        }
    }

    @Command(name = "list", mixinStandardHelpOptions = true, description = "List every backup, newest first.")
    static final class ListBackups extends GatewayCommand
    {
        ListBackups(final CliConsole console)
        {
            super(console);
        }

        @Override
        public Integer call() throws GatewayUnreachableException
        {
            return printAnswer("backup list", gateway.connect(console).get("/backups"),
                (json) ->
                {
                    final Table table = new Table("BACKUP", "STATE", "CREATED", "COMPLETED", "BYTES", "REASON");
                    for (final JsonNode backup : json.path("backups"))
                    {
                        table.row(backup.path("backupId").asString(), backup.path("state").asString(),
                            backup.path("createdAt").asString(""), text(backup.path("completedAt")),
                            backup.path("bytes").asString(), text(backup.path("failureReason")));
                    }
                    table.print(console.out());
                });
        }
    }

    @Command(name = "delete", mixinStandardHelpOptions = true, description = "Delete a backup from the store.")
    static final class Delete extends GatewayCommand
    {
        @Parameters(index = "0", paramLabel = "ID", description = "The backup id.")
        long id;

        Delete(final CliConsole console)
        {
            super(console);
        }

        @Override
        public Integer call() throws GatewayUnreachableException
        {
            final GatewayAnswer answer = gateway.connect(console).delete("/backups/" + id);
            if (!answer.isSuccess())
            {
                return reportError("backup delete", answer);
            }
            console.out().println("backup " + id + " deleted");
            return ExitCode.SUCCEEDED;
        }
    }

    @Command(name = "verify", mixinStandardHelpOptions = true, description = {
        "Check every object of a backup without restoring it.",
        "Exit 0 when it verifies, 1 when any object is missing, of another size or checksum."})
    static final class Verify extends GatewayCommand
    {
        @Parameters(index = "0", paramLabel = "ID", description = "The backup id.")
        long id;

        Verify(final CliConsole console)
        {
            super(console);
        }

        @Override
        public Integer call() throws GatewayUnreachableException
        {
            final GatewayAnswer answer = gateway.connect(console).post("/backups/" + id + "/verify");
            final int printed = printAnswer("backup verify", answer, (json) ->
            {
                console.out().println("backup " + id + ": " + (json.path("ok").asBoolean() ? "verified" : "DOES NOT VERIFY") +
                    ", " + json.path("checkedObjects").asString() + " objects checked");
                for (final JsonNode problem : json.path("problems"))
                {
                    console.out().println("  " + problem.path("object").asString() + ": " +
                        problem.path("problem").asString());
                }
            });
            if (printed != ExitCode.SUCCEEDED)
            {
                return printed;
            }
            return answer.json().path("ok").asBoolean() ? ExitCode.SUCCEEDED : ExitCode.FAILED;
        }
    }

    /**
     * Polls the backup until a terminal state; prints each change of state. An answer that says "not now" (the
     * gateway unreachable, or a 502/503/504 while the backup store or a broker is briefly away) is polled again
     * for up to {@link #OUTAGE_TOLERANCE}, with one line when it starts; the backup goes on meanwhile.
     */
    static int follow(
        final CliConsole console, final ManagementClient client, final OutputFormat output, final long backupId,
        final Duration interval) throws GatewayUnreachableException
    {
        String last = null;
        long outageSinceNs = 0;
        boolean inOutage = false;
        while (true)
        {
            GatewayAnswer answer = null;
            GatewayUnreachableException unreachable = null;
            try
            {
                answer = client.get("/backups/" + backupId);
            }
            catch (final GatewayUnreachableException e)
            {
                unreachable = e;
            }
            if (unreachable != null || isTransient(answer))
            {
                final long now = System.nanoTime();
                if (!inOutage)
                {
                    inOutage = true;
                    outageSinceNs = now;
                    console.err().println("admin: backup " + backupId + ": status not available (" +
                        (unreachable != null ? unreachable.getMessage() : answer.status() + " " +
                        answer.json().path("message").asString(answer.body())) + "); polling again for up to " +
                        OUTAGE_TOLERANCE.toSeconds() + " s");
                }
                else if (now - outageSinceNs > OUTAGE_TOLERANCE.toNanos())
                {
                    if (unreachable != null)
                    {
                        throw unreachable;
                    }
                    return Answers.reportError(console, "backup status", answer);
                }
                if (!sleep(interval))
                {
                    return ExitCode.FAILED;
                }
                continue;
            }
            inOutage = false;
            if (!answer.isSuccess())
            {
                return Answers.reportError(console, "backup status", answer);
            }
            final JsonNode json = answer.json();
            final String state = json.path("state").asString();
            if (!state.equals(last) && output != OutputFormat.json)
            {
                long done = 0;
                for (final JsonNode partition : json.path("partitions"))
                {
                    done += "COMPLETED".equals(partition.path("state").asString()) ? 1 : 0;
                }
                console.out().println("backup " + backupId + " " + state + ": " + done + " of " +
                    json.path("partitions").size() + " partitions stored");
                last = state;
            }
            if (TERMINAL.contains(state))
            {
                if (output == OutputFormat.json)
                {
                    console.out().println(answer.body());
                }
                else
                {
                    printBackup(console, json);
                }
                if ("COMPLETED".equals(state))
                {
                    return ExitCode.SUCCEEDED;
                }
                console.err().println("admin: backup " + backupId + " " + state + ": " + text(json.path("failureReason")));
                return ExitCode.FAILED;
            }
            if (!sleep(interval))
            {
                return ExitCode.FAILED;
            }
        }
    }

    /** How long {@link #follow} polls through answers that say "not now" before it reports the last one. */
    static final Duration OUTAGE_TOLERANCE = Duration.ofMinutes(2);

    private static boolean isTransient(final GatewayAnswer answer)
    {
        return answer.status() == 502 || answer.status() == 503 || answer.status() == 504;
    }

    private static boolean sleep(final Duration interval)
    {
        try
        {
            Thread.sleep(interval.toMillis());
            return true;
        }
        catch (final InterruptedException e)
        {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    static void printBackup(final CliConsole console, final JsonNode json)
    {
        console.out().println("backup " + json.path("backupId").asString() + " " + json.path("state").asString() +
            ", created " + json.path("createdAt").asString("") + ", " + json.path("bytes").asString() + " bytes" +
            (json.path("failureReason").isNull() || json.path("failureReason").isMissingNode() ? "" :
                ", failed: " + json.path("failureReason").asString()));
        final Table table = new Table("PARTITION", "BROKER", "STATE", "CHECKPOINT", "EXPORTERS", "BYTES");
        for (final JsonNode partition : json.path("partitions"))
        {
            final StringBuilder exporters = new StringBuilder();
            partition.path("exporterPositions").properties().forEach((e) ->
                exporters.append(exporters.isEmpty() ? "" : " ").append(e.getKey()).append('=').append(e.getValue().asString()));
            table.row(partition.path("partitionId").asString(), partition.path("brokerId").asString(),
                partition.path("state").asString(), partition.path("checkpointPosition").asString(), exporters.toString(),
                partition.path("bytes").asString());
        }
        table.print(console.out());
    }

    private static String text(final JsonNode node)
    {
        return node.isNull() || node.isMissingNode() ? "" : node.asString();
    }
}
