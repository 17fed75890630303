package io.sluice.broker.command;

import io.sluice.broker.control.BackfillClaims;
import io.sluice.protocol.codecs.BackfillClaimAction;
import io.sluice.protocol.codecs.BackfillClaimPhase;
import io.sluice.protocol.codecs.BackfillClaimRequestDecoder;
import io.sluice.protocol.codecs.BooleanType;
import io.sluice.protocol.transport.ResponseChannel;

import java.util.concurrent.CompletableFuture;

/**
 * A change of an exporter's backfill claim. The claim is the control group's: any broker commits a change (forwarding
 * it to the group's leader, {@link BackfillClaims#change} on the admin executor) and answers once its own replica
 * applied it.
 */
final class BackfillClaimHandler extends DecodingHandler<BackfillClaimRequestDecoder>
{
    BackfillClaimHandler(final CommandContext context)
    {
        super(context, BackfillClaimRequestDecoder::new);
    }

    @Override
    void handle(
        final BackfillClaimRequestDecoder request, final int blockLength, final int version, final ResponseChannel response)
    {
        if (context.blockTooShort(response, "backfill claim request", blockLength, BackfillClaimRequestDecoder.BLOCK_LENGTH))
        {
            return;
        }
        final int brokerId = context.brokerId;
        final BackfillClaimAction action = request.action();
        if (action != BackfillClaimAction.CLAIM && action != BackfillClaimAction.STARTED &&
            action != BackfillClaimAction.RELEASE)
        {
            context.malformed(response, 0, "broker " + brokerId + ": unknown backfill claim action " + request.actionRaw());
            return;
        }
        final BackfillClaimPhase expectedPhase = request.expectedPhase();
        if (expectedPhase != BackfillClaimPhase.NONE && expectedPhase != BackfillClaimPhase.STARTING &&
            expectedPhase != BackfillClaimPhase.STARTED)
        {
            context.malformed(response, 0, "broker " + brokerId + ": unknown backfill claim phase " +
                request.expectedPhaseRaw());
            return;
        }
        final short empty = request.emptyRaw();
        if (empty != BooleanType.TRUE.value() && empty != BooleanType.FALSE.value())
        {
            context.malformed(response, 0, "broker " + brokerId + ": backfill claim empty is " + empty + ", not 0 or 1");
            return;
        }
        final String exporterId = context.text(request.exporterIdLength(), request::exporterId, 0, response);
        final String backfillId = exporterId == null ? null :
            context.text(request.backfillIdLength(), request::backfillId, 0, response);
        final String expectedBackfillId = backfillId == null ? null :
            context.text(request.expectedBackfillIdLength(), request::expectedBackfillId, 0, response);
        if (expectedBackfillId == null)
        {
            return;
        }
        final CompletableFuture<BackfillClaims.Answer> changed = context.onAdminExecutor(0, response, () ->
            context.backfillClaims.change(action, exporterId, backfillId, expectedPhase, expectedBackfillId,
                empty == BooleanType.TRUE.value()));
        if (changed != null)
        {
            context.respondWhenDone(changed, response, 0, ResponseWriters::backfillClaim);
        }
    }
}
