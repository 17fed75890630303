package io.sluice.broker.control;

import io.sluice.broker.log.codecs.ControlSnapshotDecoder;
import io.sluice.broker.log.codecs.ControlSnapshotEncoder;
import io.sluice.broker.log.codecs.MessageHeaderDecoder;
import io.sluice.broker.log.codecs.MessageHeaderEncoder;
import io.sluice.broker.raft.SnapshotFile;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The control group's state at a snapshot: one {@code ControlSnapshot} message of the broker log schema, the stamp
 * of every partition an operation reached, every exporter's backfill claim and the latest empty backfills. Immutable;
 * partitions in id order, claims in exporter order and empty backfills oldest first, so equal states encode to equal
 * bytes.
 */
public record ControlSnapshot(
    Map<Integer, ExportingStamp> partitions, List<BackfillClaim> claims, List<EmptyBackfill> emptyBackfills,
    long leaseExpiries, BackupHold backupHold)
{
    public ControlSnapshot
    {
        partitions = Collections.unmodifiableMap(new TreeMap<>(partitions));
        final List<BackfillClaim> sorted = new ArrayList<>(claims);
        sorted.sort(Comparator.comparing(BackfillClaim::exporterId));
        claims = List.copyOf(sorted);
        emptyBackfills = List.copyOf(emptyBackfills);
    }

    /** Exporting states only. */
    public ControlSnapshot(final Map<Integer, ExportingStamp> partitions)
    {
        this(partitions, List.of(), List.of(), 0, null);
    }

    /** Without a backup hold. */
    public ControlSnapshot(
        final Map<Integer, ExportingStamp> partitions, final List<BackfillClaim> claims, final List<EmptyBackfill> emptyBackfills,
        final long leaseExpiries)
    {
        this(partitions, claims, emptyBackfills, leaseExpiries, null);
    }

    /** Without lease expiries. */
    public ControlSnapshot(
        final Map<Integer, ExportingStamp> partitions, final List<BackfillClaim> claims, final List<EmptyBackfill> emptyBackfills)
    {
        this(partitions, claims, emptyBackfills, 0, null);
    }

    public byte[] encode()
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(64 + partitions.size() * 16 +
            claims.size() * 128 + emptyBackfills.size() * 128);
        final ControlSnapshotEncoder encoder = new ControlSnapshotEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .leaseExpiries(leaseExpiries)
            .backupHoldId(backupHold == null ? 0 : backupHold.backupId())
            .backupHoldSinceMicros(backupHold == null ? 0 : backupHold.sinceMicros())
            .backupHoldExpiresAtMicros(backupHold == null ? 0 : backupHold.expiresAtMicros());
        final ControlSnapshotEncoder.PartitionsEncoder group = encoder.partitionsCount(partitions.size());
        partitions.forEach((p, stamp) ->
            group.next().partitionId(p).state(ExportingStamp.toCode(stamp.state())).version(stamp.version())
                .sinceMicros(stamp.sinceMicros()).expiresAtMicros(stamp.expiresAtMicros())
                .expiredAtMicros(stamp.expiredAtMicros()));
        final ControlSnapshotEncoder.ClaimsEncoder claimGroup = encoder.claimsCount(claims.size());
        for (final BackfillClaim claim : claims)
        {
            claimGroup.next()
                .phase(ClaimCodes.code(claim.phase()))
                .claimedAtMs(claim.claimedAtMs())
                .claimIndex(claim.claimIndex())
                .exporterId(claim.exporterId())
                .backfillId(claim.backfillId());
        }
        final ControlSnapshotEncoder.EmptyBackfillsEncoder emptyGroup = encoder.emptyBackfillsCount(emptyBackfills.size());
        for (final EmptyBackfill empty : emptyBackfills)
        {
            emptyGroup.next().createdAtMs(empty.createdAtMs()).backfillId(empty.backfillId()).exporterId(empty.exporterId());
        }
        return Arrays.copyOf(buffer.byteArray(), MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
    }

    /**
     * @throws IOException when the bytes are not a control snapshot this version reads; {@code source} names them.
     */
    public static ControlSnapshot decode(final DirectBuffer buffer, final int offset, final int length, final String source)
        throws IOException
    {
        if (length < MessageHeaderDecoder.ENCODED_LENGTH)
        {
            throw new IOException(source + " is not a control snapshot: " + length + " bytes");
        }
        // A view of exactly these bytes: whatever runs past them fails the bounds check, never reads beyond.
        final UnsafeBuffer bytes = new UnsafeBuffer(buffer, offset, length);
        final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(bytes, 0);
        if (header.schemaId() != ControlSnapshotDecoder.SCHEMA_ID || header.templateId() != ControlSnapshotDecoder.TEMPLATE_ID)
        {
            throw new IOException(source + " is not a control snapshot");
        }
        final ControlSnapshotDecoder decoder = new ControlSnapshotDecoder()
            .wrap(bytes, header.encodedLength(), header.blockLength(), header.version());
        final int groupHeaderEnd = header.encodedLength() + header.blockLength() + 4;
        if (groupHeaderEnd > length)
        {
            throw new IOException(source + " is cut short: " + length + " bytes");
        }
        final long leaseExpiries = Math.max(0, decoder.leaseExpiries());
        // Absent before schema version 6 (the null value, negative): no backup hold.
        final BackupHold backupHold = decoder.backupHoldId() > 0 ? new BackupHold(decoder.backupHoldId(),
            Math.max(0, decoder.backupHoldSinceMicros()), Math.max(0, decoder.backupHoldExpiresAtMicros())) : null;
        final Map<Integer, ExportingStamp> partitions = new TreeMap<>();
        final ControlSnapshotDecoder.PartitionsDecoder group = decoder.partitions();
        if (groupHeaderEnd + (long)group.count() * group.actingBlockLength() > length)
        {
            throw new IOException(source + " is cut short: " + group.count() + " partitions in " + length + " bytes");
        }
        for (final ControlSnapshotDecoder.PartitionsDecoder p : group)
        {
            try
            {
                // Absent before schema version 5 (the null value, negative): no time known, no lease.
                partitions.put(p.partitionId(), new ExportingStamp(ExportingStamp.toExportingState(p.state()), p.version(),
                    Math.max(0, p.sinceMicros()), Math.max(0, p.expiresAtMicros()), Math.max(0, p.expiredAtMicros())));
            }
            catch (final IllegalArgumentException e)
            {
                throw new IOException(source + ": partition " + p.partitionId() + ": " + e.getMessage(), e);
            }
        }
        final List<BackfillClaim> claims = new ArrayList<>();
        final List<EmptyBackfill> emptyBackfills = new ArrayList<>();
        if (decoder.limit() == length)
        {
            // Written before the claims were added to the snapshot (same schema version, never released): none held.
            return new ControlSnapshot(partitions, claims, emptyBackfills, leaseExpiries, backupHold);
        }
        try
        {
            for (final ControlSnapshotDecoder.ClaimsDecoder c : decoder.claims())
            {
                final long claimedAtMs = c.claimedAtMs();
                final long claimIndex = c.claimIndex();
                final var phase = ClaimCodes.phase(c.phase(), source);
                final String exporterId = ClaimCodes.text(bytes, decoder.limit(), c.exporterIdLength(), source, c::exporterId);
                final String backfillId = ClaimCodes.text(bytes, decoder.limit(), c.backfillIdLength(), source, c::backfillId);
                claims.add(new BackfillClaim(exporterId, backfillId, phase, claimedAtMs, claimIndex));
            }
            for (final ControlSnapshotDecoder.EmptyBackfillsDecoder e : decoder.emptyBackfills())
            {
                final long createdAtMs = e.createdAtMs();
                final String backfillId = ClaimCodes.text(bytes, decoder.limit(), e.backfillIdLength(), source, e::backfillId);
                final String exporterId = ClaimCodes.text(bytes, decoder.limit(), e.exporterIdLength(), source, e::exporterId);
                emptyBackfills.add(new EmptyBackfill(backfillId, exporterId, createdAtMs));
            }
        }
        catch (final IndexOutOfBoundsException | IllegalArgumentException e)
        {
            throw new IOException(source + " is cut short or corrupt in its backfill claims: " + e.getMessage(), e);
        }
        return new ControlSnapshot(partitions, claims, emptyBackfills, leaseExpiries, backupHold);
    }

    /** Writes the file whole or not at all ({@link SnapshotFile}). */
    public void writeTo(final Path file) throws IOException
    {
        SnapshotFile.write(file, encode());
    }

    public static ControlSnapshot readFrom(final Path file) throws IOException
    {
        final byte[] bytes = Files.readAllBytes(file);
        return decode(new UnsafeBuffer(bytes), 0, bytes.length, file.toString());
    }
}
