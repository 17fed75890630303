package io.sluice.qa.operator;

import io.sluice.protocol.cluster.PartitionReplica;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** How one {@code admin ...} process ended: exit code, what it printed, and how long it took. */
record CliResult(List<String> args, int exitCode, String stdout, String stderr, Duration elapsed)
{
    /** A row of the pause/resume table ({@code PAIR OUTCOME ERROR}) or the status table ({@code PAIR ROLE STATE ...}). */
    private static final Pattern OUTCOME_ROW = Pattern.compile("(?m)^(\\d+):(\\d+)\\s+(SUCCEEDED|FAILED|TIMED_OUT)\\b");
    private static final Pattern STATE_ROW =
        Pattern.compile("(?m)^(\\d+):(\\d+)\\s+\\S+\\s+(EXPORTING|PAUSED|SOFT_PAUSED|UNKNOWN)\\b");

    /** Pairs the pause/resume table lists with this outcome. */
    Set<PartitionReplica> pairsWithOutcome(final String outcome)
    {
        return rows(OUTCOME_ROW, outcome);
    }

    /** Pairs the {@code exporting status} table lists in this state. */
    Set<PartitionReplica> pairsInState(final String state)
    {
        return rows(STATE_ROW, state);
    }

    /** Every pair the output lists, whatever its outcome or state. */
    Set<PartitionReplica> listedPairs()
    {
        final Set<PartitionReplica> pairs = rows(OUTCOME_ROW, null);
        pairs.addAll(rows(STATE_ROW, null));
        return pairs;
    }

    private Set<PartitionReplica> rows(final Pattern row, final String value)
    {
        final Set<PartitionReplica> pairs = new TreeSet<>();
        final Matcher matcher = row.matcher(stdout);
        while (matcher.find())
        {
            if (value == null || value.equals(matcher.group(3)))
            {
                pairs.add(new PartitionReplica(Integer.parseInt(matcher.group(1)), Integer.parseInt(matcher.group(2))));
            }
        }
        return pairs;
    }

    @Override
    public String toString()
    {
        return "admin " + String.join(" ", args) + " -> exit " + exitCode + " after " + elapsed.toMillis() + " ms" +
            System.lineSeparator() + "stdout:" + System.lineSeparator() + stdout +
            "stderr:" + System.lineSeparator() + stderr;
    }
}
