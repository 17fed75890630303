package io.sluice.broker.command;

import io.sluice.protocol.codecs.BackfillClaimsRequestDecoder;
import io.sluice.protocol.transport.ResponseChannel;

/** The read of every backfill claim: the control group leader's ({@link io.sluice.broker.control.BackfillClaims#read}). */
final class BackfillClaimsHandler extends DecodingHandler<BackfillClaimsRequestDecoder>
{
    BackfillClaimsHandler(final CommandContext context)
    {
        super(context, BackfillClaimsRequestDecoder::new);
    }

    @Override
    void handle(
        final BackfillClaimsRequestDecoder request, final int blockLength, final int version, final ResponseChannel response)
    {
        if (context.blockTooShort(response, "backfill claims request", blockLength,
            BackfillClaimsRequestDecoder.BLOCK_LENGTH))
        {
            return;
        }
        if (context.namesAnotherBroker(request.brokerId(), BackfillClaimsRequestDecoder.brokerIdNullValue(),
            "backfill claims", response))
        {
            return;
        }
        context.respondWhenDone(context.backfillClaims.read(), response, 0, ResponseWriters::backfillClaims);
    }
}
