package io.sluice.gateway.exporting;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;

import java.util.List;

/** The answer to pause, soft pause or resume: one result per targeted pair, in partition-then-broker order. */
@JsonPropertyOrder({ "operation", "result", "targets" })
public record ExportingOperationResult(ExportingOperation operation, ExportingOutcome result, List<TargetResult> targets)
{
    public ExportingOperationResult
    {
        targets = List.copyOf(targets);
    }

    public long count(final ExportingOutcome outcome)
    {
        return targets.stream().filter(target -> target.outcome() == outcome).count();
    }
}
