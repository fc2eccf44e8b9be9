#!/bin/sh
# Usage: forecast.sh PLACE|LAT,LON [DAYS] [--us]
# Prints one "# place" line, then Open-Meteo's JSON (current + daily) for the
# place. PLACE is geocoded with Open-Meteo's geocoding API (first match);
# "City, CC" narrows the search to an ISO country code (US, DE). Needs curl.
set -eu

if [ $# -lt 1 ] || [ -z "$1" ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
    sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi

place=$1
days=${2:-3}
units=""
for arg in "$@"; do
    if [ "$arg" = "--us" ]; then
        units="-d temperature_unit=fahrenheit -d wind_speed_unit=mph -d precipitation_unit=inch"
    fi
done
case $days in
    --us) days=3 ;;
    *[!0-9]* | "") echo "forecast.sh: DAYS must be a number from 1 to 16" >&2; exit 2 ;;
esac

# One line of JSON in, the first number after "key": out (no jq needed).
first_number() {
    grep -o "\"$1\":-\{0,1\}[0-9.]*" | head -n 1 | cut -d: -f2
}

case $place in
    *[0-9],*[0-9] | *[0-9],-*[0-9])
        lat=${place%%,*}
        lon=${place#*,}
        label="$lat,$lon"
        ;;
    *)
        name=${place%%,*}
        country=""
        case $place in
            *,*) country=$(printf '%s' "${place#*,}" | tr -d ' ') ;;
        esac
        # Only a two-letter ISO country code narrows the search.
        case $country in
            [A-Za-z][A-Za-z]) ;;
            *) country="" ;;
        esac
        set -- --get 'https://geocoding-api.open-meteo.com/v1/search' \
            --data-urlencode "name=$name" -d count=10 -d language=en -d format=json
        if [ -n "$country" ]; then
            set -- "$@" -d "countryCode=$country"
        fi
        geo=$(curl -fsS --max-time 20 "$@" | tr -d '\n')
        lat=$(printf '%s' "$geo" | first_number latitude)
        lon=$(printf '%s' "$geo" | first_number longitude)
        if [ -z "$lat" ] || [ -z "$lon" ]; then
            echo "forecast.sh: no match for '$place'" >&2
            exit 1
        fi
        label=$(printf '%s' "$geo" | grep -o '"name":"[^"]*"' | head -n 1 | cut -d'"' -f4)
        region=$(printf '%s' "$geo" | grep -o '"country":"[^"]*"' | head -n 1 | cut -d'"' -f4)
        label="$label, $region ($lat,$lon)"
        ;;
esac

echo "# $label"
# $units is intentionally unquoted: it holds several curl arguments or none.
# shellcheck disable=SC2086
curl -fsS --max-time 20 --get 'https://api.open-meteo.com/v1/forecast' \
    -d "latitude=$lat" -d "longitude=$lon" \
    -d current=temperature_2m,apparent_temperature,relative_humidity_2m,precipitation,weather_code,wind_speed_10m,is_day \
    -d daily=weather_code,temperature_2m_max,temperature_2m_min,precipitation_sum,precipitation_probability_max,wind_speed_10m_max,sunrise,sunset \
    -d timezone=auto -d "forecast_days=$days" $units
echo
