package io.sluice.gateway.management;

import org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration;
import org.springframework.boot.context.TypeExcludeFilter;
import org.springframework.core.type.AnnotationMetadata;
import org.springframework.core.type.classreading.MetadataReader;
import org.springframework.core.type.classreading.MetadataReaderFactory;

/**
 * Keeps management-only classes out of the application's component scan: {@link ManagementComponent}s
 * (which would otherwise also answer on the client port) and {@link ManagementContextConfiguration}s
 * (which Boot loads itself, into the right context). Registered by {@link ManagementTypeExcludeFilterInitializer}.
 */
public final class ManagementTypeExcludeFilter extends TypeExcludeFilter
{
    private static final String MANAGEMENT_COMPONENT = ManagementComponent.class.getName();
    private static final String MANAGEMENT_CONTEXT_CONFIGURATION = ManagementContextConfiguration.class.getName();

    @Override
    public boolean match(final MetadataReader metadataReader, final MetadataReaderFactory metadataReaderFactory)
    {
        final AnnotationMetadata metadata = metadataReader.getAnnotationMetadata();
        return metadata.hasAnnotation(MANAGEMENT_CONTEXT_CONFIGURATION) ||
            metadata.hasMetaAnnotation(MANAGEMENT_CONTEXT_CONFIGURATION) ||
            metadata.hasAnnotation(MANAGEMENT_COMPONENT) ||
            metadata.hasMetaAnnotation(MANAGEMENT_COMPONENT);
    }

    @Override
    public boolean equals(final Object other)
    {
        return other != null && other.getClass() == getClass();
    }

    @Override
    public int hashCode()
    {
        return getClass().hashCode();
    }
}
