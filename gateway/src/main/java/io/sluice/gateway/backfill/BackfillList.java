package io.sluice.gateway.backfill;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

import java.util.List;

/**
 * {@code GET /actuator/backfills}: every backfill, newest first, and the partitions whose leader could not
 * be asked (their tasks are missing from the views).
 *
 * @param controlGroupUnavailable why the cluster control group could not be read, so the backfills that had nothing
 *                                to export (which only it records) are missing; absent when it was read.
 */
@JsonPropertyOrder({"backfills", "unavailablePartitions", "controlGroupUnavailable"})
public record BackfillList(
    List<BackfillView> backfills,
    List<Integer> unavailablePartitions,
    @JsonInclude(JsonInclude.Include.NON_NULL) String controlGroupUnavailable)
{
    /** A complete list as far as the control group goes. */
    public BackfillList(final List<BackfillView> backfills, final List<Integer> unavailablePartitions)
    {
        this(backfills, unavailablePartitions, null);
    }
}
