package io.sluice.cli;

import tools.jackson.databind.JsonNode;

/**
 * A backfill's progress read from the gateway's JSON ({@code GET /actuator/backfills/{id}}): its state,
 * the positions exported so far and to export over all tasks, and the fraction. The gateway's own
 * totals ({@code exportedPositions}, {@code totalPositions}, {@code progress}) win; without them they are
 * summed from the tasks, whose ranges are inclusive: a task covers [fromPosition, toPosition] and has
 * exported up to {@code exportedUpTo}.
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
            final long to = task.path("toPosition").asLong(from - 1);
            total += Math.max(0, to - from + 1);
            final JsonNode upTo = task.path("exportedUpTo");
            if (upTo.isNumber())
            {
                exported += Math.max(0, Math.min(to, upTo.asLong()) - from + 1);
            }
        }
        if (backfill.path("exportedPositions").isNumber())
        {
            exported = backfill.path("exportedPositions").asLong();
        }
        if (backfill.path("totalPositions").isNumber())
        {
            total = backfill.path("totalPositions").asLong();
        }
        final String state = backfill.path("state").asString("UNKNOWN");
        double fraction;
        if (backfill.path("progress").isNumber())
        {
            fraction = backfill.path("progress").asDouble();
        }
        else
        {
            fraction = total == 0 ? ("SUCCEEDED".equals(state) ? 1.0 : 0.0) : (double)exported / total;
        }
        fraction = Math.max(0.0, Math.min(1.0, fraction));
        return new BackfillProgress(backfill.path("backfillId").asString(""), state, exported, total, fraction);
    }

    public boolean isTerminal()
    {
        return "SUCCEEDED".equals(state) || "FAILED".equals(state) || "CANCELLED".equals(state);
    }
}
