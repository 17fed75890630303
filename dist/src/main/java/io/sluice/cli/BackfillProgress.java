package io.sluice.cli;

import tools.jackson.databind.JsonNode;

/**
 * A backfill's progress read from the gateway's JSON: its state, the records exported so far over all
 * tasks, the records in its ranges, and the fraction (the gateway's {@code progress} when given).
 * Records are counted as positions: a task covers (fromPosition, toPosition].
 */
public record BackfillProgress(String backfillId, String state, long exportedRecords, long totalRecords, double fraction)
{
    public static BackfillProgress of(final JsonNode backfill)
    {
        long exported = 0;
        long total = 0;
        for (final JsonNode task : backfill.path("tasks"))
        {
            final long from = task.path("fromPosition").asLong(0);
            final long to = task.path("toPosition").asLong(from);
            final long upTo = Math.max(from, Math.min(to, exportedUpTo(task)));
            total += Math.max(0, to - from);
            exported += upTo - from;
        }
        final String state = backfill.path("state").asString("UNKNOWN");
        double fraction;
        final JsonNode progress = backfill.path("progress");
        if (progress.isNumber())
        {
            fraction = progress.asDouble();
        }
        else if (progress.path("fraction").isNumber())
        {
            fraction = progress.path("fraction").asDouble();
        }
        else
        {
            fraction = total == 0 ? ("SUCCEEDED".equals(state) ? 1.0 : 0.0) : (double)exported / total;
        }
        fraction = Math.max(0.0, Math.min(1.0, fraction));
        return new BackfillProgress(backfill.path("backfillId").asString(""), state, exported, total, fraction);
    }

    /** A task's exported-up-to position ({@code exportedPosition}), or its start when it has none yet. */
    static long exportedUpTo(final JsonNode task)
    {
        final long from = task.path("fromPosition").asLong(0);
        for (final String name : new String[] {"exportedPosition", "exportedUpTo", "exportedUpToPosition"})
        {
            final JsonNode value = task.path(name);
            if (value.isNumber())
            {
                return Math.max(from, value.asLong());
            }
        }
        return from;
    }

    public boolean isTerminal()
    {
        return "SUCCEEDED".equals(state) || "FAILED".equals(state) || "CANCELLED".equals(state);
    }
}
