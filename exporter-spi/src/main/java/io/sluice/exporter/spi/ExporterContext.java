package io.sluice.exporter.spi;

import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

/**
 * What an exporter instance knows about itself, handed to {@link Exporter#configure}.
 *
 * @param id          the exporter's id: {@code <id>} in {@code sluice.exporters.<id>.*}; also the name of its
 *                    position, so an exporter keeps its place across restarts only under the same id.
 * @param partitionId the partition this instance exports ({@code 0} when the broker only checks the configuration
 *                    at start, see {@link Exporter#configure}).
 * @param brokerId    the broker running this instance (the partition's leader).
 * @param dataDir     the cluster's data directory ({@code sluice.data-dir}); an exporter that keeps local files puts
 *                    them under {@code <dataDir>/exports/<id>/}.
 * @param properties  the exporter's own {@code sluice.exporters.<id>.<name>} settings by {@code <name>}, as given
 *                    ({@code bootstrap-servers}, {@code producer.acks}, {@code args.url}, ...): without the ones the
 *                    broker reads itself ({@code type}, {@code class-name}, {@code jar}, {@code start-from},
 *                    {@code retry.*}), in any spelling. Read them through {@link #settings()}, which takes every
 *                    spelling environment variables produce. Immutable.
 */
public record ExporterContext(String id, int partitionId, int brokerId, Path dataDir, Map<String, String> properties)
{
    /** Prefix of a third-party exporter's own settings in {@link #properties()}. */
    public static final String ARGS_PREFIX = "args.";

    public ExporterContext
    {
        properties = properties == null ? Map.of() : Map.copyOf(properties);
    }

    /** {@link #properties()} through relaxed names and duration and size parsing; its refusals name the full setting. */
    public ExporterSettings settings()
    {
        return new ExporterSettings(id, properties);
    }

    /**
     * A third-party exporter's own configuration: {@code sluice.exporters.<id>.args.<name>} by {@code <name>}
     * (the prefix removed, matched in any spelling: {@code ARGS_OUT} binds to {@code args.out}), sorted by name. Empty when there are none.
     */
    public Map<String, String> args()
    {
        return new TreeMap<>(settings().group("args").asMap());
    }
}
