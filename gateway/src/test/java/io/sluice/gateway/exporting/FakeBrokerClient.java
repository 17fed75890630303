package io.sluice.gateway.exporting;

import io.sluice.gateway.broker.AdminOperation;
import io.sluice.gateway.broker.AdminResult;
import io.sluice.gateway.broker.AppendId;
import io.sluice.gateway.broker.AppendResult;
import io.sluice.gateway.broker.BrokerClient;
import io.sluice.gateway.broker.BrokerTopology;
import io.sluice.gateway.broker.RecordToAppend;
import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.protocol.codecs.AdminRequestKind;
import io.sluice.protocol.codecs.ExportingState;

import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;

/** A broker client that records admin requests and answers each as the test's responder decides. */
public final class FakeBrokerClient implements BrokerClient
{
    public record AdminCall(PartitionReplica target, AdminOperation operation, Duration timeout)
    {
        public AdminRequestKind kind()
        {
            return operation.kind();
        }

        public long version()
        {
            return operation.version();
        }

        public boolean leaderTargeted()
        {
            return operation.controlLeaderTargeted();
        }
    }

    public interface Responder
    {
        CompletableFuture<AdminResult> answer(AdminCall call);
    }

    public final Queue<AdminCall> calls = new ConcurrentLinkedQueue<>();
    private volatile Responder responder = FakeBrokerClient::applied;

    public FakeBrokerClient respondWith(final Responder responder)
    {
        this.responder = responder;
        return this;
    }

    /** The answer of a replica that applied the request. */
    public static CompletableFuture<AdminResult> applied(final AdminCall call)
    {
        return CompletableFuture.completedFuture(new AdminResult(call.target(), stateOf(call.kind()), call.version(), 10, 20));
    }

    /** Answers every request as applied, and forgets earlier calls. */
    public void reset()
    {
        responder = FakeBrokerClient::applied;
        calls.clear();
    }

    /** The state a replica holds after obeying a request of this kind. */
    public static ExportingState stateOf(final AdminRequestKind kind)
    {
        return switch (kind)
        {
            case PAUSE_EXPORTING -> ExportingState.PAUSED;
            case SOFT_PAUSE_EXPORTING -> ExportingState.SOFT_PAUSED;
            default -> ExportingState.EXPORTING;
        };
    }

    @Override
    public CompletableFuture<AdminResult> admin(
        final PartitionReplica target, final AdminOperation operation, final Duration timeout)
    {
        final AdminCall call = new AdminCall(target, operation, timeout);
        calls.add(call);
        return responder.answer(call);
    }

    @Override
    public CompletableFuture<AppendResult> append(
        final int partitionId, final List<RecordToAppend> records, final AppendId id, final Duration timeout)
    {
        return CompletableFuture.failedFuture(new UnsupportedOperationException("not used by exporting control"));
    }

    @Override
    public CompletableFuture<BrokerTopology> topology(final int brokerId, final Duration timeout)
    {
        return CompletableFuture.failedFuture(new UnsupportedOperationException("not used by exporting control"));
    }

    @Override
    public void close()
    {
    }
}
