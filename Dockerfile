# The kg CLI and API. Used by docker-compose.yml: `kg serve --store neo4j --host 0.0.0.0`.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /app

COPY pyproject.toml README.md ./
COPY kg ./kg
COPY api ./api
COPY viz ./viz
RUN pip install . && useradd --create-home --uid 1000 kg && mkdir /data && chown kg /data
COPY seeds ./seeds

USER kg
ENV KG_STORE_DIR=/data
EXPOSE 8000
CMD ["kg", "serve", "--store", "neo4j", "--host", "0.0.0.0", "--port", "8000"]
