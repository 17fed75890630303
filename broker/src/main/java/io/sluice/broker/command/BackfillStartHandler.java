package io.sluice.broker.command;

import io.sluice.broker.partition.Partition;
import io.sluice.protocol.codecs.BackfillRequestDecoder;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.message.ErrorResponseWriter;
import io.sluice.protocol.transport.ResponseChannel;

import java.util.concurrent.CompletableFuture;

/**
 * A backfill's registration on a partition, served by its leader (a follower names the leader, as for appends): the
 * claim first ({@link io.sluice.broker.control.BackfillClaims#registrationRefusal}), so a backfill whose claim was
 * released or taken over registers nothing; then {@link io.sluice.broker.backfill.BackfillCommandHandler#onStart}.
 */
final class BackfillStartHandler extends DecodingHandler<BackfillRequestDecoder>
{
    BackfillStartHandler(final CommandContext context)
    {
        super(context, BackfillRequestDecoder::new);
    }

    @Override
    void handle(
        final BackfillRequestDecoder request, final int blockLength, final int version, final ResponseChannel response)
    {
        // The claim's index came with version 4: a block without it cannot say it has none.
        if (version >= 4 && context.blockTooShort(response, "backfill request", blockLength,
            BackfillRequestDecoder.BLOCK_LENGTH))
        {
            return;
        }
        final int partitionId = request.partitionId();
        final int taskCount = request.taskCount();
        final int firstTaskId = request.firstTaskId();
        // Null (0) before protocol version 4, or from a sender that took no claim.
        final long claimIndex = request.claimIndex();
        final String backfillId = context.text(request.backfillIdLength(), request::backfillId, partitionId, response);
        final String exporterId = backfillId == null ? null :
            context.text(request.exporterIdLength(), request::exporterId, partitionId, response);
        if (exporterId != null && claimIndex < 0)
        {
            context.invalid(response, partitionId, context.pair(partitionId) +
                ": a claim's control index is at least 1, was " + claimIndex);
            return;
        }
        final Partition partition = exporterId == null ? null : context.leaderOrRespond(partitionId, response);
        if (partition == null)
        {
            return;
        }
        final CompletableFuture<String> refusal =
            context.backfillClaims.registrationRefusal(exporterId, backfillId, claimIndex);
        final Runnable register = () ->
        {
            final String refused = refusal.getNow(null);
            if (refused != null)
            {
                response.respond(ErrorResponseWriter.of(ErrorCode.CONFLICT, partitionId, ErrorResponseWriter.NO_LEADER,
                    context.pair(partitionId) + ": " + refused));
                return;
            }
            partition.backfills().handler().onStart(partitionId, backfillId, exporterId, taskCount, firstTaskId, response);
        };
        if (refusal.isDone() && !refusal.isCompletedExceptionally())
        {
            register.run();
            return;
        }
        // The claim is not applied here yet: wait for it off the control group's apply thread.
        refusal.whenCompleteAsync((ignored, error) ->
        {
            if (error != null)
            {
                context.respondError(response, partitionId, error);
            }
            else
            {
                register.run();
            }
        }, context.adminExecutor);
    }
}
