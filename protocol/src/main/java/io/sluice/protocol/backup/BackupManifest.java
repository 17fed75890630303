package io.sluice.protocol.backup;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A backup's cut, and once every partition is stored its manifest: the cluster layout, and for every partition the
 * broker whose replica was copied, the checkpoint position C(p), each exporter's acknowledged position X(e, p) at it,
 * and (in the manifest) every stored object with its size and SHA-256. One text format for both, a line a fact:
 * <pre>
 *   sluice-backup 1
 *   backup &lt;id&gt;
 *   created-at &lt;epoch ms&gt;
 *   hold-millis &lt;ms&gt;
 *   layout &lt;brokers&gt; &lt;partitions&gt; &lt;replication factor&gt;
 *   partition &lt;p&gt; &lt;broker&gt; &lt;checkpoint&gt;
 *   exporter &lt;p&gt; &lt;position&gt; &lt;exporter id&gt;
 *   object &lt;p&gt; &lt;size&gt; &lt;sha256&gt; &lt;name&gt;
 *   sink &lt;exporter id&gt; &lt;state&gt; &lt;snapshot&gt;   (a sink snapshot taken inside the cut)
 *   completed-at &lt;epoch ms&gt;             (manifest only)
 * </pre>
 * A cut with no partitions (and no layout check) is what {@code started} holds: a backup whose cut is being taken.
 */
public record BackupManifest(
    long backupId,
    long createdAtMillis,
    long completedAtMillis,
    long holdMillis,
    Layout layout,
    List<PartitionCut> partitions,
    List<SinkCut> sinks)
{
    static final String MAGIC = "sluice-backup 1";

    public BackupManifest
    {
        partitions = List.copyOf(partitions);
        sinks = List.copyOf(sinks);
    }

    /** Without sink snapshots. */
    public BackupManifest(
        final long backupId, final long createdAtMillis, final long completedAtMillis, final long holdMillis,
        final Layout layout, final List<PartitionCut> partitions)
    {
        this(backupId, createdAtMillis, completedAtMillis, holdMillis, layout, partitions, List.of());
    }

    /**
     * A snapshot of an exporter's sink taken inside the cut (issue 26), in the repository its exporter names:
     * {@code state} as the sink reported it when taken (SUCCESS is the only one a cut is committed with).
     */
    public record SinkCut(String exporterId, String snapshot, String state, String detail)
    {
        /** The state of a snapshot that ended well, as the sinks name it. */
        public static final String SUCCESS = "SUCCESS";

        public boolean succeeded()
        {
            return SUCCESS.equals(state);
        }

        public SinkCut
        {
            for (final String field : new String[] {exporterId, snapshot, state})
            {
                if (field == null || field.isEmpty() || field.contains(" ") || field.contains("\n"))
                {
                    throw new IllegalArgumentException("a sink snapshot's exporter id, snapshot and state are words, " +
                        "were '" + exporterId + "', '" + snapshot + "', '" + state + "'");
                }
            }
        }
    }

    /** Brokers, partitions and replication factor of the cluster the backup was taken of. */
    public record Layout(int brokers, int partitions, int replicationFactor)
    {
        @Override
        public String toString()
        {
            return brokers + " brokers, " + partitions + " partitions, replication factor " + replicationFactor;
        }
    }

    /** One partition's part of the backup; {@code objects} is empty in a cut. */
    public record PartitionCut(
        int partitionId,
        int brokerId,
        long checkpointPosition,
        Map<String, Long> exporterPositions,
        List<PartitionObject> objects)
    {
        public PartitionCut
        {
            exporterPositions = Map.copyOf(exporterPositions);
            objects = List.copyOf(objects);
        }

        public long bytes()
        {
            return objects.stream().mapToLong(PartitionObject::size).sum();
        }
    }

    /** A stored file of a partition, by its name in the partition ("state", "records/segment-...log"). */
    public record PartitionObject(String name, long size, String sha256)
    {
    }

    public boolean isComplete()
    {
        return completedAtMillis > 0;
    }

    public long bytes()
    {
        return partitions.stream().mapToLong(PartitionCut::bytes).sum();
    }

    public PartitionCut partition(final int partitionId)
    {
        return partitions.stream().filter((p) -> p.partitionId() == partitionId).findFirst().orElse(null);
    }

    /** This cut completed with the partitions' objects. */
    public BackupManifest completed(final Map<Integer, List<PartitionObject>> objects, final long completedAt)
    {
        final List<PartitionCut> withObjects = new ArrayList<>();
        for (final PartitionCut cut : partitions)
        {
            withObjects.add(new PartitionCut(cut.partitionId(), cut.brokerId(), cut.checkpointPosition(),
                cut.exporterPositions(), objects.getOrDefault(cut.partitionId(), List.of())));
        }
        return new BackupManifest(backupId, createdAtMillis, completedAt, holdMillis, layout, withObjects, sinks);
    }

    public byte[] toBytes()
    {
        final StringBuilder out = new StringBuilder(MAGIC).append('\n');
        out.append("backup ").append(backupId).append('\n');
        out.append("created-at ").append(createdAtMillis).append('\n');
        out.append("hold-millis ").append(holdMillis).append('\n');
        out.append("layout ").append(layout.brokers()).append(' ').append(layout.partitions()).append(' ')
            .append(layout.replicationFactor()).append('\n');
        for (final PartitionCut cut : partitions)
        {
            out.append("partition ").append(cut.partitionId()).append(' ').append(cut.brokerId()).append(' ')
                .append(cut.checkpointPosition()).append('\n');
            for (final Map.Entry<String, Long> e : new TreeMap<>(cut.exporterPositions()).entrySet())
            {
                out.append("exporter ").append(cut.partitionId()).append(' ').append(e.getValue()).append(' ')
                    .append(e.getKey()).append('\n');
            }
            for (final PartitionObject object : cut.objects())
            {
                out.append("object ").append(cut.partitionId()).append(' ').append(object.size()).append(' ')
                    .append(object.sha256()).append(' ').append(object.name()).append('\n');
            }
        }
        for (final SinkCut sink : sinks)
        {
            out.append("sink ").append(sink.exporterId()).append(' ').append(sink.state()).append(' ')
                .append(sink.snapshot()).append('\n');
        }
        if (completedAtMillis > 0)
        {
            out.append("completed-at ").append(completedAtMillis).append('\n');
        }
        return out.toString().getBytes(StandardCharsets.UTF_8);
    }

    /** Reads a cut or manifest; {@code what} names it in the error. */
    public static BackupManifest parse(final byte[] bytes, final String what)
    {
        final String[] lines = new String(bytes, StandardCharsets.UTF_8).split("\n");
        if (lines.length == 0 || !lines[0].equals(MAGIC))
        {
            throw new IllegalArgumentException(what + " is not a Sluice backup manifest (first line '" +
                (lines.length == 0 ? "" : lines[0]) + "')");
        }
        long id = -1;
        long created = 0;
        long completed = 0;
        long hold = 0;
        Layout layout = null;
        final Map<Integer, int[]> brokers = new LinkedHashMap<>();
        final Map<Integer, Long> checkpoints = new LinkedHashMap<>();
        final Map<Integer, Map<String, Long>> positions = new LinkedHashMap<>();
        final Map<Integer, List<PartitionObject>> objects = new LinkedHashMap<>();
        final List<SinkCut> sinks = new ArrayList<>();
        for (int i = 1; i < lines.length; i++)
        {
            final String line = lines[i];
            if (line.isBlank())
            {
                continue;
            }
            try
            {
                final String[] f = line.split(" ", 5);
                switch (f[0])
                {
                    case "backup" -> id = Long.parseLong(f[1]);
                    case "created-at" -> created = Long.parseLong(f[1]);
                    case "completed-at" -> completed = Long.parseLong(f[1]);
                    case "hold-millis" -> hold = Long.parseLong(f[1]);
                    case "layout" -> layout = new Layout(Integer.parseInt(f[1]), Integer.parseInt(f[2]),
                        Integer.parseInt(f[3]));
                    case "partition" ->
                    {
                        final int p = Integer.parseInt(f[1]);
                        brokers.put(p, new int[] {Integer.parseInt(f[2])});
                        checkpoints.put(p, Long.parseLong(f[3]));
                    }
                    case "exporter" -> positions.computeIfAbsent(Integer.parseInt(f[1]), (k) -> new LinkedHashMap<>())
                        .put(line.split(" ", 4)[3], Long.parseLong(f[2]));
                    case "sink" -> sinks.add(new SinkCut(f[1], f[3], f[2], null));
                    case "object" -> objects.computeIfAbsent(Integer.parseInt(f[1]), (k) -> new ArrayList<>())
                        .add(new PartitionObject(f[4], Long.parseLong(f[2]), f[3]));
                    default -> throw new IllegalArgumentException("unknown line");
                }
            }
            catch (final RuntimeException e)
            {
                throw new IllegalArgumentException(what + ": line " + (i + 1) + " ('" + line + "') is not readable", e);
            }
        }
        if (id < 0 || layout == null)
        {
            throw new IllegalArgumentException(what + " names no backup id or layout");
        }
        final List<PartitionCut> cuts = new ArrayList<>();
        for (final Map.Entry<Integer, int[]> p : brokers.entrySet())
        {
            cuts.add(new PartitionCut(p.getKey(), p.getValue()[0], checkpoints.get(p.getKey()),
                positions.getOrDefault(p.getKey(), Map.of()), objects.getOrDefault(p.getKey(), List.of())));
        }
        return new BackupManifest(id, created, completed, hold, layout, cuts, sinks);
    }
}
