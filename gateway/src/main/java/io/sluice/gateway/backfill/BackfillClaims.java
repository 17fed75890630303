package io.sluice.gateway.backfill;

import io.sluice.gateway.broker.BrokerFailure;
import io.sluice.gateway.management.ManagementException;
import io.sluice.gateway.topology.ClusterTopology;
import io.sluice.protocol.codecs.BackfillClaimAction;
import io.sluice.protocol.codecs.BackfillClaimOutcome;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.concurrent.Futures;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpStatus;

import java.time.Duration;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;

/**
 * What the cluster control group keeps of backfills: each exporter's reset claim (one reset of an exporter at a time,
 * whichever gateway) and the backfills that had nothing to export. The control-group side of {@link BackfillService}.
 */
final class BackfillClaims
{
    private static final Logger LOG = LoggerFactory.getLogger(BackfillClaims.class);

    private final ClusterTopology topology;
    private final BackfillClient client;
    private final Duration requestTimeout;

    BackfillClaims(final ClusterTopology topology, final BackfillClient client, final Duration requestTimeout)
    {
        this.topology = topology;
        this.client = client;
        this.requestTimeout = requestTimeout;
    }

    /**
     * Marks the backfill's own claim STARTED or releases it; never fails. When the control group cannot be reached the
     * claim stays STARTING, and another reset takes it over once the takeover bound has passed (and no task of it is
     * unfinished).
     */
    CompletableFuture<Void> finish(
        final BackfillClaimAction action, final String exporterId, final String backfillId)
    {
        return claim(ClaimRequest.of(action, exporterId, backfillId)).handle((answer, failure) ->
        {
            if (failure != null)
            {
                LOG.warn("backfill {} of exporter {}: {} of its claim failed ({}); the claim is released for a new " +
                    "reset when its takeover bound has passed", backfillId, exporterId, action,
                    Futures.unwrapAll(failure).getMessage());
            }
            else if (answer.outcome() == BackfillClaimOutcome.NOT_HELD)
            {
                LOG.warn("backfill {} of exporter {}: {} of its claim: {}", backfillId, exporterId, action, answer.reason());
            }
            else
            {
                LOG.info("backfill {} of exporter {}: {}", backfillId, exporterId, answer.reason());
            }
            return null;
        });
    }

    /**
     * Sends a claim change to the control group's leader as the topology knows it (any broker would do; the leader
     * saves a hop). A failure becomes a {@link ManagementException}: 503, or 404 for an exporter the brokers do not
     * have. A CLAIM whose answer was lost may still have been taken: it is released, so it does not wait out its bound.
     */
    CompletableFuture<ClaimAnswer> claim(final ClaimRequest request)
    {
        final OptionalInt target = controlTarget();
        if (target.isEmpty())
        {
            return CompletableFuture.failedFuture(new ManagementException(HttpStatus.SERVICE_UNAVAILABLE,
                "no broker is reachable to take the claim of exporter '" + request.exporterId() + "'; nothing was changed"));
        }
        return client.claim(target.getAsInt(), request, requestTimeout).exceptionallyCompose(failure ->
        {
            final Throwable cause = Futures.unwrapAll(failure);
            if (request.action() == BackfillClaimAction.CLAIM && BrokerFailure.of(cause) == BrokerFailure.TIMED_OUT)
            {
                finish(BackfillClaimAction.RELEASE, request.exporterId(), request.backfillId());
            }
            if (BrokerFailure.errorCode(cause) == ErrorCode.EXPORTER_NOT_FOUND)
            {
                return CompletableFuture.failedFuture(new ManagementException(HttpStatus.NOT_FOUND, cause.getMessage()));
            }
            return CompletableFuture.failedFuture(new ManagementException(HttpStatus.SERVICE_UNAVAILABLE,
                "exporter '" + request.exporterId() + "': the control group did not answer the " + request.action() +
                " of backfill " + request.backfillId() + "'s claim through broker " + target.getAsInt() + ": " +
                describe(cause) + (request.action() == BackfillClaimAction.CLAIM ? "; nothing was registered" : "")));
        });
    }

    /** The control group's leader if the topology knows a reachable one, else the first reachable broker. */
    private OptionalInt controlTarget()
    {
        final OptionalInt leader = topology.controlLeader();
        if (leader.isPresent() && topology.isReachable(leader.getAsInt()))
        {
            return leader;
        }
        for (int brokerId = 0; brokerId < topology.distribution().brokerCount(); brokerId++)
        {
            if (topology.isReachable(brokerId))
            {
                return OptionalInt.of(brokerId);
            }
        }
        return OptionalInt.empty();
    }

    /** The control group's backfills, or why they could not be read; never fails. */
    record ControlRead(ControlBackfills backfills, String failure)
    {
        ControlBackfills orElseThrow(final String what)
        {
            if (backfills == null)
            {
                throw new ManagementException(HttpStatus.SERVICE_UNAVAILABLE, what + ": " + failure +
                    "; nothing was changed");
            }
            return backfills;
        }
    }

    /**
     * Reads the claims and empty backfills from the control group's leader; a NOT_LEADER answer naming another
     * broker is asked there once.
     */
    CompletableFuture<ControlRead> read()
    {
        final OptionalInt target = controlTarget();
        if (target.isEmpty())
        {
            return CompletableFuture.completedFuture(new ControlRead(null, "no broker is reachable to read the control group"));
        }
        final int first = target.getAsInt();
        return client.claims(first, requestTimeout)
            .exceptionallyCompose(failure ->
            {
                final int hint = BrokerFailure.leaderHint(failure);
                return hint >= 0 && hint != first && hint < topology.distribution().brokerCount() ?
                    client.claims(hint, requestTimeout) : CompletableFuture.failedFuture(failure);
            })
            .handle((backfills, failure) -> failure == null ? new ControlRead(backfills, null) :
                new ControlRead(null, "the cluster control group could not be read (asked broker " + first + "): " +
                    describe(Futures.unwrapAll(failure))));
    }

    private String describe(final Throwable cause)
    {
        return switch (BrokerFailure.of(cause))
        {
            case TIMED_OUT -> "no answer within " + requestTimeout.toMillis() + " ms";
            case UNREACHABLE -> "unreachable";
            default -> cause.getMessage();
        };
    }
}
