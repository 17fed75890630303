package io.sluice.gateway.backup;

import java.util.List;
import java.util.Map;

/** A backup as {@code GET /actuator/backups/{id}} answers it (CONTRACT §8). */
public record BackupView(
    long backupId,
    BackupState state,
    String failureReason,
    String createdAt,
    String completedAt,
    long holdMillis,
    long bytes,
    List<PartitionView> partitions,
    List<SinkView> sinks)
{
    public enum BackupState
    {
        IN_PROGRESS,
        COMPLETED,
        FAILED,
        INCOMPLETE
    }

    /** One partition's part: the replica copied, its checkpoint C(p) and the exporters' positions X(e, p). */
    public record PartitionView(
        int partitionId,
        int brokerId,
        BackupState state,
        long checkpointPosition,
        Map<String, Long> exporterPositions,
        long bytes)
    {
    }

    /** A sink snapshot taken inside the cut. */
    public record SinkView(String exporterId, String snapshot, String state)
    {
    }

    /** {@code POST /actuator/backups}'s 202 answer. */
    public record Accepted(long backupId, BackupState state, long holdMillis)
    {
    }

    /** {@code POST /actuator/backups/{id}/verify}'s answer. */
    public record Verification(long backupId, boolean ok, int checkedObjects, List<Problem> problems)
    {
    }

    public record Problem(String object, String problem)
    {
    }

    /** {@code GET /actuator/backups}: every backup, newest first. */
    public record BackupList(List<BackupView> backups)
    {
    }
}
