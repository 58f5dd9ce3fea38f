FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md alembic.ini ./
COPY tracelake ./tracelake
COPY pipelines ./pipelines
COPY migrations ./migrations
RUN pip install --no-cache-dir -e '.[demo]'
ENTRYPOINT ["tracelake"]
