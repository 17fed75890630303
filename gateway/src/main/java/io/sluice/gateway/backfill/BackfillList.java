package io.sluice.gateway.backfill;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;

import java.util.List;

/**
 * {@code GET /actuator/backfills}: every backfill, newest first, and the partitions whose leader could not
 * be asked (their tasks are missing from the views).
 */
@JsonPropertyOrder({"backfills", "unavailablePartitions"})
public record BackfillList(List<BackfillView> backfills, List<Integer> unavailablePartitions)
{
}
