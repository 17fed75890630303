package io.sluice.exporter.kafka;

import io.sluice.exporter.spi.ExporterConfigException;
import io.sluice.exporter.spi.ExporterSettings;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * The settings of a {@code kafka} exporter ({@code sluice.exporters.<id>.*}): {@code bootstrap-servers} (required),
 * {@code topic} (default {@code sluice-records}) and {@code producer.<name>}, any Kafka producer setting.
 * <p>
 * The producer is always idempotent with {@code acks=all} and byte-array serializers: a setting that would turn
 * those off, or an unknown producer setting (a typo would silently fall back to Kafka's default), is refused.
 * Where nothing is given, the producer's waits are shortened so that one call into the exporter returns within
 * about {@code delivery.timeout.ms} when Kafka is down: a pause waits for the call in progress.
 * Immutable.
 */
public final class KafkaExporterConfig
{
    public static final String BOOTSTRAP_SERVERS = "bootstrap-servers";
    public static final String TOPIC = "topic";
    public static final String PRODUCER = "producer";
    public static final String PRODUCER_PREFIX = PRODUCER + ".";
    public static final String DEFAULT_TOPIC = "sluice-records";

    /** Producer settings that differ from Kafka's defaults unless given: bounded waits (see the class comment). */
    static final Map<String, String> DEFAULT_PRODUCER_SETTINGS = Map.of(
        ProducerConfig.MAX_BLOCK_MS_CONFIG, "3000",
        ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "3000",
        ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "5000");

    /** Set by the exporter itself: the bytes it hands over and the delivery guarantee it promises. */
    private static final Set<String> OWNED = Set.of(
        ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG,
        ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, ProducerConfig.TRANSACTIONAL_ID_CONFIG);

    private final String bootstrapServers;
    private final String topic;
    private final Map<String, String> producerSettings;

    private KafkaExporterConfig(final String bootstrapServers, final String topic, final Map<String, String> producerSettings)
    {
        this.bootstrapServers = bootstrapServers;
        this.topic = topic;
        this.producerSettings = Map.copyOf(producerSettings);
    }

    /** Reads {@code properties} (names as given, under {@code sluice.exporters.<id>.}) for an exporter without an id. */
    public static KafkaExporterConfig from(final Map<String, String> properties)
    {
        return from(new ExporterSettings(null, properties));
    }

    /**
     * Reads and checks an exporter's settings, in any spelling of their names ({@code BOOTSTRAP_SERVERS},
     * {@code bootstrapservers}; {@code producer.compressiontype} is Kafka's {@code compression.type}); touches no
     * network.
     *
     * @throws ExporterConfigException naming the setting that cannot work.
     */
    public static KafkaExporterConfig from(final ExporterSettings settings)
    {
        settings.requireOnly(Set.of(BOOTSTRAP_SERVERS, TOPIC), Set.of(PRODUCER), "a kafka exporter");
        final String bootstrap = settings.required(BOOTSTRAP_SERVERS, "for a kafka exporter: host:port[,host:port...]");
        final String topic = settings.text(TOPIC, DEFAULT_TOPIC);
        if (topic.length() > 249 || !topic.matches("[a-zA-Z0-9._-]+"))
        {
            throw settings.invalid(TOPIC, "'" + topic + "' is not a Kafka topic name (1 to 249 of a-z A-Z 0-9 . _ -)");
        }

        final ExporterSettings producer = settings.group(PRODUCER);
        final Map<String, String> kafkaNames = new HashMap<>();
        ProducerConfig.configNames().forEach(name -> kafkaNames.put(ExporterSettings.canonical(name), name));
        final Map<String, String> settingNames = new HashMap<>();
        final Map<String, String> values = new HashMap<>(DEFAULT_PRODUCER_SETTINGS);
        for (final String given : producer.names())
        {
            final String name = kafkaNames.get(ExporterSettings.canonical(given));
            if (name == null)
            {
                throw producer.invalid(given, "not a Kafka producer setting");
            }
            final String value = producer.text(given, "");
            if (OWNED.contains(name))
            {
                throw producer.invalid(given, "set by the exporter itself" +
                    (name.equals(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG) ? " from " + BOOTSTRAP_SERVERS : "") +
                    "; remove it");
            }
            if (name.equals(ProducerConfig.ACKS_CONFIG) && !value.equals("all") && !value.equals("-1"))
            {
                throw producer.invalid(given, "'" + value + "': the exporter needs acks=all, so that " +
                    "an acknowledged position is on every in-sync replica");
            }
            if (name.equals(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG) && !value.equalsIgnoreCase("true"))
            {
                throw producer.invalid(given, "'" + value + "': the exporter needs the idempotent " +
                    "producer, so that retries keep each key's order");
            }
            values.put(name, value);
            settingNames.put(name, given);
        }
        final KafkaExporterConfig config = new KafkaExporterConfig(bootstrap, topic, values);
        config.check(producer, settingNames);
        return config;
    }

    /** The settings a producer for this exporter is built with; {@code clientId} names it in Kafka's logs. */
    public Map<String, Object> producerProperties(final String clientId)
    {
        final Map<String, Object> properties = new HashMap<>(producerSettings);
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        properties.put(ProducerConfig.ACKS_CONFIG, "all");
        properties.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        properties.putIfAbsent(ProducerConfig.CLIENT_ID_CONFIG, clientId);
        return properties;
    }

    public String bootstrapServers()
    {
        return bootstrapServers;
    }

    public String topic()
    {
        return topic;
    }

    /** Lets Kafka's own parser check values and combinations (for example max.in.flight.requests.per.connection > 5). */
    private void check(final ExporterSettings producer, final Map<String, String> settingNames)
    {
        final ProducerConfig parsed;
        try
        {
            parsed = new ProducerConfig(producerProperties("check"));
        }
        catch (final ConfigException e)
        {
            throw producer.invalid(propertyNamedIn(e.getMessage(), settingNames), e.getMessage());
        }
        final long linger = ((Number)parsed.values().get(ProducerConfig.LINGER_MS_CONFIG)).longValue();
        final long request = ((Number)parsed.values().get(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG)).longValue();
        final long delivery = ((Number)parsed.values().get(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG)).longValue();
        if (delivery < linger + request)
        {
            throw producer.invalid(settingNames.getOrDefault(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG,
                ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG),
                delivery + " must be at least linger.ms + request.timeout.ms (" + (linger + request) + ")");
        }
    }

    /** The given name of the producer setting Kafka's message names (the longest that it mentions), else {@code *}. */
    private static String propertyNamedIn(final String message, final Map<String, String> settingNames)
    {
        String named = null;
        for (final String name : settingNames.keySet())
        {
            if (message != null && message.contains(name) && (named == null || name.length() > named.length()))
            {
                named = name;
            }
        }
        return named == null ? "*" : settingNames.get(named);
    }

    @Override
    public String toString()
    {
        return "kafka " + bootstrapServers + " topic " + topic;
    }
}
