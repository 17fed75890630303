package io.sluice.broker.command;

import io.sluice.protocol.codecs.AdminRequestKind;
import io.sluice.protocol.codecs.AdminResponseDecoder;
import io.sluice.protocol.codecs.ErrorResponseDecoder;
import io.sluice.protocol.codecs.MessageHeaderDecoder;
import io.sluice.protocol.codecs.AdminRequestEncoder;
import io.sluice.protocol.codecs.BooleanType;
import io.sluice.protocol.codecs.MessageHeaderEncoder;
import io.sluice.protocol.codecs.OperationScope;
import io.sluice.protocol.message.SbeMessages;
import io.sluice.protocol.transport.MessageWriter;
import io.sluice.protocol.transport.RequestHandler;
import io.sluice.protocol.transport.ResponseChannel;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.concurrent.CompletableFuture;

/**
 * Sends one pause through a broker's own command API at start, so an operator's first pause does not run the admin
 * path's code for the first time (issue 30: the brokers' part of the first pause after a start was ~100-150 ms against
 * ~5 ms warm, classes loaded and code interpreted in three JVMs at once). The pause carries version 0, which every
 * replica holds or has passed, so {@code ExportingControl.change} answers the state held without a proposal: nothing
 * is committed and no exporter changes.
 */
public final class AdminPathWarmUp
{
    private AdminPathWarmUp()
    {
    }

    /**
     * Pauses {@code partitionId} on {@code brokerId} at version 0 through {@code commandApi}; completes with what the
     * broker answered (a message's description), never exceptionally.
     */
    public static CompletableFuture<String> run(final RequestHandler commandApi, final int brokerId, final int partitionId)
    {
        final ExpandableArrayBuffer request = new ExpandableArrayBuffer(64);
        final AdminRequestEncoder encoder = new AdminRequestEncoder()
            .wrapAndApplyHeader(request, 0, new MessageHeaderEncoder())
            .brokerId(brokerId)
            .partitionId(partitionId)
            .kind(AdminRequestKind.PAUSE_EXPORTING)
            .version(0)
            .leaderTargeted(BooleanType.FALSE)
            .operationScope(OperationScope.PARTITION)
            .leaseMicros(0);
        encoder.operationPartitionsCount(0);
        final int length = MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
        final CompletableFuture<String> answered = new CompletableFuture<>();
        final ResponseChannel channel = (MessageWriter response) ->
        {
            // Written and read back as the transport would: the response's encoder is part of the path.
            final UnsafeBuffer bytes = new UnsafeBuffer(new byte[response.encodedLength()]);
            response.write(bytes, 0);
            answered.complete(describe(bytes));
        };
        try
        {
            commandApi.onRequest(request, 0, length, channel);
        }
        catch (final RuntimeException e)
        {
            answered.complete("failed: " + e);
        }
        return answered;
    }

    private static String describe(final UnsafeBuffer bytes)
    {
        final int templateId = SbeMessages.templateIdOf(bytes, 0, bytes.capacity());
        if (templateId != ErrorResponseDecoder.TEMPLATE_ID && templateId != AdminResponseDecoder.TEMPLATE_ID)
        {
            return SbeMessages.describe(bytes, 0, bytes.capacity());
        }
        final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(bytes, 0);
        if (templateId == ErrorResponseDecoder.TEMPLATE_ID)
        {
            final ErrorResponseDecoder error = new ErrorResponseDecoder().wrap(bytes, MessageHeaderDecoder.ENCODED_LENGTH,
                header.blockLength(), header.version());
            return error.code() + " " + error.message();
        }
        final AdminResponseDecoder admin = new AdminResponseDecoder().wrap(bytes, MessageHeaderDecoder.ENCODED_LENGTH,
            header.blockLength(), header.version());
        return admin.exportingState() + " at version " + admin.version();
    }
}
