package io.sluice.cli;

import java.time.Duration;

/**
 * {@code backfill status ID --watch}: polls the backfill until a terminal state and shows a progress
 * bar (fraction, records/s, ETA; one position is one record). On a terminal the bar is redrawn in place with {@code \r}; otherwise
 * (logs, CI) one line is printed every {@link #LINE_INTERVAL} at most, and whenever the state changes.
 * A gateway that stops answering is tolerated for {@link #MAX_UNREACHABLE_POLLS} polls in a row.
 */
final class BackfillWatch
{
    static final Duration LINE_INTERVAL = Duration.ofSeconds(5);
    static final int MAX_UNREACHABLE_POLLS = 5;
    private static final int BAR_WIDTH = 30;

    private final CliConsole console;
    private final ManagementClient client;
    private final String backfillId;
    private final Duration interval;

    BackfillWatch(final CliConsole console, final ManagementClient client, final String backfillId, final Duration interval)
    {
        this.console = console;
        this.client = client;
        this.backfillId = backfillId;
        this.interval = interval;
    }

    int run() throws GatewayUnreachableException, InterruptedException
    {
        final String path = "/backfills/" + BackfillCommands.encode(backfillId);
        long firstNanos = -1;
        long firstExported = 0;
        long lastLineNanos = Long.MIN_VALUE;
        String lastState = null;
        int unreachable = 0;
        int drawnWidth = 0;

        while (true)
        {
            final GatewayAnswer answer;
            try
            {
                answer = client.get(path);
                unreachable = 0;
            }
            catch (final GatewayUnreachableException ex)
            {
                if (++unreachable >= MAX_UNREACHABLE_POLLS)
                {
                    endLine(drawnWidth);
                    throw ex;
                }
                console.sleeper().sleep(interval);
                continue;
            }
            if (!answer.isSuccess())
            {
                endLine(drawnWidth);
                return Answers.reportError(console, "backfill status " + backfillId, answer);
            }

            final BackfillProgress progress = BackfillProgress.of(answer.json());
            final long now = console.clock().nanoTime();
            if (firstNanos < 0)
            {
                firstNanos = now;
                firstExported = progress.exportedRecords();
            }
            final double seconds = (now - firstNanos) / 1e9;
            final double rate = seconds > 0 ? (progress.exportedRecords() - firstExported) / seconds : 0.0;
            final String line = render(progress, rate);

            if (console.interactive())
            {
                final String padded = line.length() < drawnWidth ? line + " ".repeat(drawnWidth - line.length()) : line;
                console.out().print("\r" + padded);
                console.out().flush();
                drawnWidth = line.length();
            }
            else if (progress.isTerminal() || !progress.state().equals(lastState)
                || now - lastLineNanos >= LINE_INTERVAL.toNanos())
            {
                console.out().println(line);
                lastLineNanos = now;
            }
            lastState = progress.state();

            if (progress.isTerminal())
            {
                endLine(drawnWidth);
                final boolean succeeded = "SUCCEEDED".equals(progress.state());
                (succeeded ? console.out() : console.err()).println("backfill " + backfillId + " " + progress.state()
                    + (succeeded ? "" : ": see 'admin backfill status " + backfillId + "' for the failed tasks"));
                return succeeded ? ExitCode.SUCCEEDED : ExitCode.FAILED;
            }
            console.sleeper().sleep(interval);
        }
    }

    private void endLine(final int drawnWidth)
    {
        if (console.interactive() && drawnWidth > 0)
        {
            console.out().println();
        }
    }

    static String render(final BackfillProgress progress, final double recordsPerSecond)
    {
        final int filled = (int)Math.round(progress.fraction() * BAR_WIDTH);
        final StringBuilder line = new StringBuilder(96)
            .append('[').append("#".repeat(filled)).append("-".repeat(BAR_WIDTH - filled)).append("] ")
            .append(String.format("%5.1f%%", progress.fraction() * 100))
            .append("  ").append(progress.exportedRecords()).append('/').append(progress.totalRecords()).append(" records")
            .append("  ").append(String.format("%.0f rec/s", recordsPerSecond))
            .append("  ETA ");
        final long remaining = progress.totalRecords() - progress.exportedRecords();
        if (progress.isTerminal() || remaining <= 0)
        {
            line.append("0s");
        }
        else if (recordsPerSecond <= 0)
        {
            line.append('?');
        }
        else
        {
            line.append(Durations.format(Duration.ofMillis((long)(remaining / recordsPerSecond * 1000))));
        }
        return line.append("  ").append(progress.state()).toString();
    }
}
