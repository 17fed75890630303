package io.sluice.gateway.backup;

import io.sluice.gateway.topology.ClusterTopology;

import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which brokers went down while backups were uploading. A partition's upload runs on one thread of its leader's
 * process and nowhere else, so once that process is gone (the topology finds no connection to it: refused or reset,
 * not merely slow) the upload is lost for good; a restarted broker does not take it up again. A broker counts as gone
 * only after it stayed known down for {@code grace}, so one refused poll never fails a backup.
 * <p>
 * Thread-safe: {@link #observe} runs on the backup watcher every few hundred ms, {@link #lostSince} on any reader.
 */
final class UploaderOutages
{
    /** Several topology polls (every 500 ms) must all find the broker down; a restart takes longer (~10 s). */
    static final Duration DEFAULT_GRACE = Duration.ofSeconds(3);

    private final ClusterTopology topology;
    private final Clock clock;
    private final Duration grace;
    private final Map<Integer, Long> downSinceMillis = new ConcurrentHashMap<>();

    UploaderOutages(final ClusterTopology topology, final Clock clock, final Duration grace)
    {
        this.topology = topology;
        this.clock = clock;
        this.grace = grace;
    }

    /** Notes which brokers are known down now; a broker that answers again is forgotten. */
    void observe()
    {
        final long now = clock.millis();
        for (int b = 0; b < topology.distribution().brokerCount(); b++)
        {
            if (topology.isKnownDown(b))
            {
                downSinceMillis.putIfAbsent(b, now);
            }
            else
            {
                downSinceMillis.remove(b);
            }
        }
    }

    /** Since when (epoch ms) the broker has been known down, once that lasted the grace; -1 until then. */
    long lostSince(final int brokerId)
    {
        observe();
        final Long since = downSinceMillis.get(brokerId);
        return since != null && clock.millis() - since >= grace.toMillis() ? since : -1;
    }
}
