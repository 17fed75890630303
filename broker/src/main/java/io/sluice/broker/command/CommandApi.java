package io.sluice.broker.command;

import io.sluice.broker.backup.PartitionBackups;
import io.sluice.broker.backup.SinkBackups;
import io.sluice.broker.control.BackupHolds;
import io.sluice.broker.control.BackfillClaims;
import io.sluice.broker.control.ControlGroup;
import io.sluice.broker.control.ExportingControl;
import io.sluice.broker.disk.DiskGuard;
import io.sluice.broker.partition.Partition;
import io.sluice.protocol.cluster.PartitionDistribution;
import io.sluice.protocol.codecs.MessageHeaderDecoder;
import io.sluice.protocol.message.AdminLimits;
import io.sluice.protocol.message.SbeMessages;
import io.sluice.protocol.transport.RequestHandler;
import io.sluice.protocol.transport.ResponseChannel;
import org.agrona.DirectBuffer;
import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.concurrent.UnsafeBuffer;

import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;

/**
 * The broker's command, admin and topology API: a thin dispatcher that reads each request's message header and hands
 * it to the {@link CommandHandler} of its kind, which decodes it (once, with reusable decoders per I/O thread), calls
 * the broker and answers exactly once. Malformed or unknown input is answered here. Never throws to the transport.
 * Adding a request kind is one handler and one line in {@link #handlers}.
 */
public final class CommandApi implements RequestHandler
{
    private final int brokerId;
    private final CommandContext context;
    private final Int2ObjectHashMap<CommandHandler> handlers = new Int2ObjectHashMap<>();
    private final ThreadLocal<Header> headers = ThreadLocal.withInitial(Header::new);

    /**
     * @param adminExecutor runs the Raft proposals of admin requests, off the transport's I/O thread: a proposal
     *                      takes from a fraction of a millisecond to a few under load, and a fan-out brings one
     *                      request per partition on the same connection, so proposing inline would queue them.
     */
    public CommandApi(
        final int brokerId,
        final PartitionDistribution distribution,
        final Map<Integer, Partition> partitions,
        final ControlGroup control,
        final ExportingControl exportingControl,
        final BackfillClaims backfillClaims,
        final Executor adminExecutor,
        final DiskGuard diskGuard,
        final PartitionBackups backups,
        final BackupHolds backupHolds,
        final SinkBackups sinkBackups)
    {
        this(brokerId, distribution, partitions, control, exportingControl, backfillClaims, adminExecutor,
            Clock.systemUTC(), diskGuard, backups, backupHolds, sinkBackups);
    }

    /** @param clock bounds exporting state versions: one beyond this clock plus {@link AdminLimits#MAX_VERSION_AHEAD} is refused. */
    public CommandApi(
        final int brokerId,
        final PartitionDistribution distribution,
        final Map<Integer, Partition> partitions,
        final ControlGroup control,
        final ExportingControl exportingControl,
        final BackfillClaims backfillClaims,
        final Executor adminExecutor,
        final Clock clock,
        final DiskGuard diskGuard,
        final PartitionBackups backups,
        final BackupHolds backupHolds,
        final SinkBackups sinkBackups)
    {
        this.brokerId = brokerId;
        this.context = new CommandContext(brokerId, distribution, partitions, control, exportingControl, backfillClaims,
            adminExecutor, clock, diskGuard, backups, backupHolds, sinkBackups);
        for (final CommandHandler handler : handlers(context))
        {
            handlers.put(handler.templateId(), handler);
        }
    }

    /** One handler for each request kind the broker serves. */
    private static List<CommandHandler> handlers(final CommandContext context)
    {
        return List.of(
            new AppendHandler(context),
            new AdminHandler(context),
            new TopologyHandler(context),
            new BackfillStartHandler(context),
            new BackfillClaimHandler(context),
            new BackfillClaimsHandler(context),
            new BackfillStatusHandler(context),
            new BackfillCancelHandler(context),
            new RebalanceHandler(context),
            new ExportersStatusHandler(context),
            new BackupPartitionHandler(context),
            new BackupHoldHandler(context),
            new SinkSnapshotsHandler(context));
    }

    @Override
    public void onRequest(final DirectBuffer buffer, final int offset, final int length, final ResponseChannel response)
    {
        try
        {
            final int templateId = SbeMessages.templateIdOf(buffer, offset, length);
            if (templateId == SbeMessages.NOT_A_MESSAGE)
            {
                context.malformed(response, 0, "not a Sluice message: " + SbeMessages.describe(buffer, offset, length));
                return;
            }
            final CommandHandler handler = handlers.get(templateId);
            if (handler == null)
            {
                context.malformed(response, 0, "broker " + brokerId + ": not a request: " +
                    SbeMessages.describe(buffer, offset, length));
                return;
            }
            final Header h = headers.get();
            // A view of exactly the frame's message: a length that lies reads past it and fails instead of reading on.
            h.view.wrap(buffer, offset, length);
            h.header.wrap(h.view, 0);
            handler.onRequest(h.view, MessageHeaderDecoder.ENCODED_LENGTH, h.header.blockLength(), h.header.version(),
                response);
        }
        catch (final RuntimeException e)
        {
            // Generated decoders read out of bounds on lying lengths: the view is bounded, so that lands here.
            context.malformed(response, 0, "broker " + brokerId + ": malformed request: " + e.getMessage());
        }
    }

    /** The reusable message view and header decoder of one I/O thread. */
    private static final class Header
    {
        final UnsafeBuffer view = new UnsafeBuffer(0, 0);
        final MessageHeaderDecoder header = new MessageHeaderDecoder();
    }
}
