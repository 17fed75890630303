package io.sluice.qa.bench;

import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;

import java.util.concurrent.CompletableFuture;

/** Applies entries and does nothing else: the floor any Ratis state machine pays, the benchmarks' bare Ratis side. */
final class ApplyingStateMachine extends BaseStateMachine
{
    @Override
    public CompletableFuture<Message> applyTransaction(final TransactionContext trx)
    {
        final LogEntryProto entry = trx.getLogEntry();
        updateLastAppliedTermIndex(entry.getTerm(), entry.getIndex());
        return CompletableFuture.completedFuture(Message.EMPTY);
    }
}
