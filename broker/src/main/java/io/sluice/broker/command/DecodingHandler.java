package io.sluice.broker.command;

import io.sluice.protocol.transport.ResponseChannel;
import org.agrona.DirectBuffer;
import org.agrona.sbe.MessageDecoderFlyweight;

import java.util.function.Supplier;

/**
 * A {@link CommandHandler} over one generated decoder, kept for each I/O thread and wrapped around every request of
 * its kind before {@link #handle}.
 */
abstract class DecodingHandler<D extends MessageDecoderFlyweight> implements CommandHandler
{
    protected final CommandContext context;
    private final ThreadLocal<D> decoders;
    private final int templateId;

    DecodingHandler(final CommandContext context, final Supplier<D> newDecoder)
    {
        this.context = context;
        this.decoders = ThreadLocal.withInitial(newDecoder);
        this.templateId = newDecoder.get().sbeTemplateId();
    }

    @Override
    public final int templateId()
    {
        return templateId;
    }

    @Override
    public final void onRequest(
        final DirectBuffer message, final int bodyOffset, final int blockLength, final int version,
        final ResponseChannel response)
    {
        final D request = decoders.get();
        request.wrap(message, bodyOffset, blockLength, version);
        handle(request, blockLength, version, response);
    }

    /** Handles a request wrapped by its decoder; {@code blockLength} and {@code version} are its header's. */
    abstract void handle(D request, int blockLength, int version, ResponseChannel response);
}
