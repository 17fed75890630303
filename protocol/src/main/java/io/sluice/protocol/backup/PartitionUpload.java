package io.sluice.protocol.backup;

import io.sluice.protocol.backup.BackupManifest.PartitionObject;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * What the broker that copied a partition reports once it is done ({@link BackupKeys#upload}): the objects it stored,
 * or why it could not. Text, a line a fact:
 * <pre>
 *   sluice-backup-partition 1
 *   partition &lt;p&gt; &lt;broker&gt; &lt;checkpoint&gt;
 *   object &lt;size&gt; &lt;sha256&gt; &lt;name&gt;      (each object)
 *   failed &lt;reason&gt;                     (instead, when the upload failed)
 * </pre>
 */
public record PartitionUpload(int partitionId, int brokerId, long checkpointPosition, List<PartitionObject> objects,
    String failure)
{
    static final String MAGIC = "sluice-backup-partition 1";

    public PartitionUpload
    {
        objects = List.copyOf(objects);
    }

    public boolean failed()
    {
        return failure != null;
    }

    public byte[] toBytes()
    {
        final StringBuilder out = new StringBuilder(MAGIC).append('\n');
        out.append("partition ").append(partitionId).append(' ').append(brokerId).append(' ')
            .append(checkpointPosition).append('\n');
        for (final PartitionObject object : objects)
        {
            out.append("object ").append(object.size()).append(' ').append(object.sha256()).append(' ')
                .append(object.name()).append('\n');
        }
        if (failure != null)
        {
            out.append("failed ").append(failure.replace('\n', ' ')).append('\n');
        }
        return out.toString().getBytes(StandardCharsets.UTF_8);
    }

    public static PartitionUpload parse(final byte[] bytes, final String what)
    {
        final String[] lines = new String(bytes, StandardCharsets.UTF_8).split("\n");
        if (lines.length < 2 || !lines[0].equals(MAGIC))
        {
            throw new IllegalArgumentException(what + " is not a partition upload report");
        }
        final String[] head = lines[1].split(" ");
        if (head.length != 4 || !head[0].equals("partition"))
        {
            throw new IllegalArgumentException(what + ": line 2 ('" + lines[1] + "') is not readable");
        }
        final List<PartitionObject> objects = new ArrayList<>();
        String failure = null;
        for (int i = 2; i < lines.length; i++)
        {
            final String line = lines[i];
            if (line.startsWith("object "))
            {
                final String[] f = line.split(" ", 4);
                objects.add(new PartitionObject(f[3], Long.parseLong(f[1]), f[2]));
            }
            else if (line.startsWith("failed "))
            {
                failure = line.substring("failed ".length());
            }
            else if (!line.isBlank())
            {
                throw new IllegalArgumentException(what + ": line " + (i + 1) + " ('" + line + "') is not readable");
            }
        }
        return new PartitionUpload(Integer.parseInt(head[1]), Integer.parseInt(head[2]), Long.parseLong(head[3]),
            objects, failure);
    }
}
