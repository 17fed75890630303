package io.sluice.qa.bench;

import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.qa.cluster.ExportingControlAnswer;
import io.sluice.qa.cluster.GatewayClient;

import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Pauses and resumes over HTTP as an operator makes them ({@code POST /actuator/exporting/pause|resume}), timed from
 * the benchmark's JVM: a round is pause all, resume all, pause one random pair, resume it. Shared by the pause-http
 * and hosts-scale benchmarks.
 */
final class PauseRounds
{
    private static final Pattern FANOUT_SUM =
        Pattern.compile("sluice_exporting_operation_seconds_sum\\{[^}]*operation=\"PAUSE\"[^}]*result=\"SUCCEEDED\"[^}]*} ([0-9.eE+-]+)");

    /**
     * One round's four latencies in ns, and the gateway's fan-out time of the pause of all pairs (its timer's sum,
     * scraped before and after that call: not timed).
     */
    record Round(long pauseAllNs, long resumeAllNs, long pauseOneNs, long resumeOneNs, long fanoutNs)
    {
    }

    private PauseRounds()
    {
    }

    static Round round(final GatewayClient gateway, final List<PartitionReplica> pairs)
    {
        final PartitionReplica one = pairs.get(ThreadLocalRandom.current().nextInt(pairs.size()));
        final double fanoutBefore = fanoutSeconds(gateway);
        final long pauseAll = timed(gateway.exportingControl("pause", null), pairs.size());
        final double fanoutAfter = fanoutSeconds(gateway);
        return new Round(
            pauseAll,
            timed(gateway.exportingControl("resume", null), pairs.size()),
            timed(gateway.exportingControl("pause", List.of(one)), 1),
            timed(gateway.exportingControl("resume", List.of(one)), 1),
            Math.round((fanoutAfter - fanoutBefore) * 1e9));
    }

    /** The gateway's fan-out time of successful pauses so far ({@code sluice_exporting_operation_seconds_sum}). */
    static double fanoutSeconds(final GatewayClient gateway)
    {
        final Matcher matcher = FANOUT_SUM.matcher(gateway.get("/actuator/prometheus").body());
        return matcher.find() ? Double.parseDouble(matcher.group(1)) : 0;
    }

    /** The call's latency; fails the benchmark when it did not succeed on every pair (no failed call is a sample). */
    static long timed(final ExportingControlAnswer answer, final int pairs)
    {
        if (answer.status() != 200 || !"SUCCEEDED".equals(answer.result()) || answer.targets().size() != pairs)
        {
            throw new IllegalStateException("exporting call did not succeed on all " + pairs + " pairs: " + answer);
        }
        return answer.http().elapsed().toNanos();
    }
}
